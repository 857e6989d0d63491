// The server side of `fieldproof clock`: a ZeroMQ ROUTER on ipc://<dir>/control.sock that answers
// Control frames (lock-step wire format) with the handler's ControlReply, on a thread of its own.
// Private to the engine (the session owns one per run).
//
//   ControlEndpoint ep("/runs/a/control.sock", [&](const lockstep::Control& c) { ... }, idle);
//   ...                                   // the destructor stops the thread and unlinks the socket
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "fieldproof/lockstep/protocol.hpp"
#include "fieldproof/lockstep/zmq_socket.hpp"

namespace fieldproof::engine {

class ControlEndpoint {
 public:
  using Handler = std::function<lockstep::ControlReply(const lockstep::Control&)>;
  // Binds (throws std::runtime_error naming the path when it cannot) and starts serving. `idle`
  // (may be empty) runs on the endpoint's thread about every 50 ms between requests.
  ControlEndpoint(std::string socket_path, Handler handler, std::function<void()> idle);
  ~ControlEndpoint();
  ControlEndpoint(const ControlEndpoint&) = delete;
  ControlEndpoint& operator=(const ControlEndpoint&) = delete;

  // "ipc://<socket_path>".
  const std::string& endpoint() const { return endpoint_; }
  // Stops serving, joins, removes the socket file. Idempotent.
  void stop();

 private:
  void serve();
  // Answers every request already queued (none left: returns).
  void answer_queued();

  std::string path_;
  std::string endpoint_;
  Handler handler_;
  std::function<void()> idle_;
  // A context of its own: stop() terminates it, so nothing of the endpoint outlives the run.
  lockstep::ZmqContext context_;
  lockstep::ZmqSocket socket_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace fieldproof::engine
