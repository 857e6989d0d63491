// The server side of `fieldproof clock`: a ZeroMQ ROUTER on ipc://<dir>/control.sock that answers
// Control frames (lock-step wire format) with the handler's ControlReply, on a thread of its own
// (a FrameServer, frame_server.hpp).
// Private to the engine (the session owns one per run).
//
//   ControlEndpoint ep("/runs/a/control.sock", [&](const lockstep::Control& c) { ... }, idle);
//   ...                                   // the destructor stops the thread and unlinks the socket
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "fieldproof/lockstep/protocol.hpp"
#include "frame_server.hpp"

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
  // The answer to one request: Control -> the handler's ControlReply, anything else an Error.
  lockstep::Frame answer(std::string_view request) const;

  std::string path_;
  std::string endpoint_;
  Handler handler_;
  // With a context of its own: stop() terminates it, so nothing of the endpoint outlives the run.
  std::unique_ptr<FrameServer> server_;
};

}  // namespace fieldproof::engine
