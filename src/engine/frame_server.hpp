// A ZeroMQ ROUTER answering one lock-step frame per request on a thread of its own: the serve loop
// of a live run's control endpoint (control_endpoint.hpp) and of a player's (play_session.cpp).
// Private to the engine. The owner creates the context and binds the ROUTER (its own error
// messages), then hands both over.
//
//   FrameServer server(std::move(context), std::move(bound_router));
//   server.start([&](std::string_view request) -> lockstep::Frame { ... }, idle);
//   ...
//   server.stop();  // joins, closes the socket and terminates the context
#pragma once

#include <atomic>
#include <functional>
#include <string_view>
#include <thread>

#include "fieldproof/lockstep/protocol.hpp"
#include "fieldproof/lockstep/zmq_socket.hpp"

namespace fieldproof::engine {

class FrameServer {
 public:
  // The answer to one request frame (its bytes, undecoded: the handler decodes and refuses).
  // Called on the server's thread, one request at a time.
  using Handler = std::function<lockstep::Frame(std::string_view request)>;

  // `router` is a ROUTER of `context`, bound already.
  FrameServer(lockstep::ZmqContext context, lockstep::ZmqSocket router);
  ~FrameServer();
  FrameServer(const FrameServer&) = delete;
  FrameServer& operator=(const FrameServer&) = delete;

  // Starts serving: requests queued since the bind are answered first. `idle` (may be empty) runs
  // on the server's thread about every 50 ms between requests. Call once.
  void start(Handler handler, std::function<void()> idle = {});
  // Stops serving, joins, closes the socket and terminates the context. Idempotent.
  void stop();

 private:
  void serve();
  void answer_queued();  // answers every request already queued (none left: returns)

  lockstep::ZmqContext context_;
  lockstep::ZmqSocket socket_;  // after context_: closed before the context is terminated
  Handler handler_;
  std::function<void()> idle_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace fieldproof::engine
