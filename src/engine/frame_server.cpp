#include "frame_server.hpp"

#include <string>
#include <utility>
#include <vector>

#include "fieldproof/lockstep/codec.hpp"

namespace fieldproof::engine {

FrameServer::FrameServer(lockstep::ZmqContext context, lockstep::ZmqSocket router)
    : context_(std::move(context)), socket_(std::move(router)) {}

FrameServer::~FrameServer() { stop(); }

void FrameServer::start(Handler handler, std::function<void()> idle) {
  if (!socket_.valid() || thread_.joinable()) return;
  handler_ = std::move(handler);
  idle_ = std::move(idle);
  thread_ = std::thread([this] { serve(); });
}

void FrameServer::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  socket_.close();
  context_ = lockstep::ZmqContext();  // terminates the server's own context
}

void FrameServer::serve() {
  while (!stop_.load()) {
    const lockstep::ZmqResult<short> ready = socket_.poll(lockstep::ZmqPoll::kIn, 50);
    if (!ready.ok() && !ready.status().interrupted()) return;
    if (idle_) idle_();
    if (!ready.ok() || *ready == 0) continue;
    answer_queued();
  }
}

void FrameServer::answer_queued() {
  while (true) {
    // [routing id][frame] (a DEALER sends no delimiter); anything else is dropped.
    size_t count = 0;
    auto parts = socket_.recv_multipart(/*dont_wait=*/true, /*max_frames=*/3, &count);
    if (!parts.ok()) return;
    if (count != 2) continue;
    const lockstep::Frame reply = handler_((*parts)[1]);
    // A peer gone or a full queue loses only this reply (the client times out).
    (void)socket_.send_multipart({(*parts)[0], lockstep::encode_frame(reply)}, /*dont_wait=*/true);
  }
}

}  // namespace fieldproof::engine
