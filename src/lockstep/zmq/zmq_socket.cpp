#include "fieldproof/lockstep/zmq_socket.hpp"

#include <zmq.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace fieldproof::lockstep {

static_assert(sizeof(zmq_msg_t) <= 64, "ZmqMessage's storage holds a zmq_msg_t");
static_assert(alignof(zmq_msg_t) <= 8, "ZmqMessage's storage is aligned for a zmq_msg_t");
static_assert(ZmqPoll::kIn == ZMQ_POLLIN && ZmqPoll::kOut == ZMQ_POLLOUT &&
              ZmqPoll::kErr == ZMQ_POLLERR);

namespace {

ZmqStatus last_error(std::string_view what) { return ZmqStatus::failure(what, zmq_errno()); }

std::string with_name(std::string_view prefix, std::string_view name) {
  std::string s(prefix);
  s += name;
  return s;
}

zmq_msg_t* as_msg(void* p) { return static_cast<zmq_msg_t*>(p); }
const zmq_msg_t* as_msg(const void* p) { return static_cast<const zmq_msg_t*>(p); }

}  // namespace

// ---- ZmqStatus ---------------------------------------------------------------------------------

ZmqStatus ZmqStatus::failure(std::string_view what, int error) {
  if (error == 0) error = EINVAL;  // a failure is never ok
  std::string m(what);
  m += ": ";
  m += zmq_strerror(error);
  return {error, std::move(m)};
}

bool ZmqStatus::would_block() const { return error_ == EAGAIN; }
bool ZmqStatus::interrupted() const { return error_ == EINTR; }

// ---- ZmqContext --------------------------------------------------------------------------------

ZmqResult<ZmqContext> ZmqContext::create() {
  void* c = zmq_ctx_new();
  if (c == nullptr) return last_error("creating a ZeroMQ context");
  return ZmqContext(c, true);
}

ZmqContext& ZmqContext::process() {
  static ZmqContext* ctx = [] {
    void* c = zmq_ctx_new();
    if (c != nullptr) {
      zmq_ctx_set(c, ZMQ_BLOCKY, 0);
      if (const char* n = std::getenv("FIELDPROOF_ZMQ_IO_THREADS"); n != nullptr) {
        zmq_ctx_set(c, ZMQ_IO_THREADS, std::atoi(n));
      }
    }
    return new ZmqContext(c, false);  // never destroyed (see the header)
  }();
  return *ctx;
}

ZmqContext::~ZmqContext() {
  if (ctx_ != nullptr && owned_) zmq_ctx_term(ctx_);
}

ZmqContext& ZmqContext::operator=(ZmqContext&& o) noexcept {
  if (this != &o) {
    if (ctx_ != nullptr && owned_) zmq_ctx_term(ctx_);
    ctx_ = std::exchange(o.ctx_, nullptr);
    owned_ = o.owned_;
  }
  return *this;
}

// ---- ZmqMessage --------------------------------------------------------------------------------

ZmqMessage::ZmqMessage() { zmq_msg_init(as_msg(msg())); }
ZmqMessage::~ZmqMessage() { zmq_msg_close(as_msg(msg())); }

std::string_view ZmqMessage::view() const {
  auto* m = const_cast<zmq_msg_t*>(as_msg(msg()));  // zmq_msg_data takes a non-const pointer
  return {static_cast<const char*>(zmq_msg_data(m)), zmq_msg_size(m)};
}

size_t ZmqMessage::size() const { return zmq_msg_size(as_msg(msg())); }
bool ZmqMessage::more() const { return zmq_msg_more(as_msg(msg())) != 0; }
int ZmqMessage::source_fd() const { return zmq_msg_get(as_msg(msg()), ZMQ_SRCFD); }

// ---- ZmqSocket ---------------------------------------------------------------------------------

ZmqResult<ZmqSocket> ZmqSocket::open(ZmqContext& context, SocketType type) {
  if (!context.valid()) return ZmqStatus::failure("creating a socket (no ZeroMQ context)", EFAULT);
  int t = ZMQ_PAIR;
  switch (type) {
    case SocketType::kPair:
      t = ZMQ_PAIR;
      break;
    case SocketType::kReq:
      t = ZMQ_REQ;
      break;
    case SocketType::kRep:
      t = ZMQ_REP;
      break;
    case SocketType::kDealer:
      t = ZMQ_DEALER;
      break;
    case SocketType::kRouter:
      t = ZMQ_ROUTER;
      break;
  }
  void* s = zmq_socket(context.raw(), t);
  if (s == nullptr) return last_error("creating a socket");
  return ZmqSocket(s);
}

ZmqSocket& ZmqSocket::operator=(ZmqSocket&& o) noexcept {
  if (this != &o) {
    close();
    s_ = std::exchange(o.s_, nullptr);
  }
  return *this;
}

void ZmqSocket::close() {
  if (s_ != nullptr) zmq_close(std::exchange(s_, nullptr));
}

ZmqStatus ZmqSocket::set_int(int option, int value, std::string_view name) {
  if (zmq_setsockopt(s_, option, &value, sizeof value) != 0) {
    return last_error(with_name("setting ", name));
  }
  return {};
}

ZmqStatus ZmqSocket::set_int64(int option, int64_t value, std::string_view name) {
  if (zmq_setsockopt(s_, option, &value, sizeof value) != 0) {
    return last_error(with_name("setting ", name));
  }
  return {};
}

ZmqStatus ZmqSocket::set_bytes(int option, std::string_view value, std::string_view name) {
  if (zmq_setsockopt(s_, option, value.data(), value.size()) != 0) {
    return last_error(with_name("setting ", name));
  }
  return {};
}

ZmqResult<int> ZmqSocket::get_int(int option, std::string_view name) const {
  int value = 0;
  size_t len = sizeof value;
  if (zmq_getsockopt(s_, option, &value, &len) != 0) return last_error(with_name("reading ", name));
  return value;
}

ZmqStatus ZmqSocket::set_linger(int ms) { return set_int(ZMQ_LINGER, ms, "ZMQ_LINGER"); }
ZmqStatus ZmqSocket::set_receive_timeout(int ms) { return set_int(ZMQ_RCVTIMEO, ms, "ZMQ_RCVTIMEO"); }
ZmqStatus ZmqSocket::set_send_timeout(int ms) { return set_int(ZMQ_SNDTIMEO, ms, "ZMQ_SNDTIMEO"); }
ZmqStatus ZmqSocket::set_send_high_water_mark(int n) {
  return set_int(ZMQ_SNDHWM, n, "ZMQ_SNDHWM");
}
ZmqStatus ZmqSocket::set_receive_high_water_mark(int n) {
  return set_int(ZMQ_RCVHWM, n, "ZMQ_RCVHWM");
}
ZmqStatus ZmqSocket::set_identity(std::string_view id) {
  return set_bytes(ZMQ_ROUTING_ID, id, "ZMQ_ROUTING_ID");
}

ZmqResult<int> ZmqSocket::fd() const {
  // ZMQ_FD is an int on POSIX.
  return get_int(ZMQ_FD, "ZMQ_FD");
}

ZmqResult<int> ZmqSocket::events() const { return get_int(ZMQ_EVENTS, "ZMQ_EVENTS"); }

ZmqResult<short> ZmqSocket::poll(short events, long timeout_ms) {
  // zmq_poll would take a null socket for an (ignored) descriptor item and just time out.
  if (s_ == nullptr) return ZmqStatus::failure("zmq_poll", ENOTSOCK);
  zmq_pollitem_t item{s_, -1, events, 0};
  if (zmq_poll(&item, 1, timeout_ms) < 0) return last_error("zmq_poll");
  return static_cast<short>(item.revents & events);
}

ZmqResult<std::string> ZmqSocket::last_endpoint() const {
  char buf[1024] = {};
  size_t len = sizeof buf;
  if (zmq_getsockopt(s_, ZMQ_LAST_ENDPOINT, buf, &len) != 0) {
    return last_error("reading ZMQ_LAST_ENDPOINT");
  }
  return std::string(buf);
}

ZmqStatus ZmqSocket::bind(const std::string& endpoint) {
  if (zmq_bind(s_, endpoint.c_str()) != 0) return last_error("binding '" + endpoint + "'");
  return {};
}

ZmqStatus ZmqSocket::connect(const std::string& endpoint) {
  if (zmq_connect(s_, endpoint.c_str()) != 0) return last_error("connecting to '" + endpoint + "'");
  return {};
}

ZmqStatus ZmqSocket::monitor(const std::string& endpoint, int events) {
  if (zmq_socket_monitor(s_, endpoint.empty() ? nullptr : endpoint.c_str(), events) != 0) {
    return last_error("monitoring on '" + endpoint + "'");
  }
  return {};
}

ZmqStatus ZmqSocket::send(std::string_view frame, SendFlags flags) {
  const int f = (flags.more ? ZMQ_SNDMORE : 0) | (flags.dont_wait ? ZMQ_DONTWAIT : 0);
  if (zmq_send(s_, frame.data(), frame.size(), f) < 0) return last_error("sending");
  return {};
}

ZmqStatus ZmqSocket::send_multipart(std::span<const std::string_view> frames, bool dont_wait) {
  for (size_t i = 0; i < frames.size(); ++i) {
    ZmqStatus s = send(frames[i], {.more = i + 1 < frames.size(), .dont_wait = dont_wait});
    if (!s.ok()) return s;
  }
  return {};
}

ZmqStatus ZmqSocket::send_multipart(std::initializer_list<std::string_view> frames,
                                    bool dont_wait) {
  return send_multipart(std::span<const std::string_view>(frames.begin(), frames.size()),
                        dont_wait);
}

ZmqStatus ZmqSocket::recv(ZmqMessage& m, bool dont_wait) {
  if (zmq_msg_recv(as_msg(m.msg()), s_, dont_wait ? ZMQ_DONTWAIT : 0) < 0) {
    return last_error("receiving");
  }
  return {};
}

ZmqResult<std::vector<std::string>> ZmqSocket::recv_multipart(bool dont_wait, size_t max_frames,
                                                              size_t* frames_seen) {
  std::vector<std::string> frames;
  size_t seen = 0;
  ZmqMessage m;
  while (true) {
    // Only the first frame may be "nothing yet": the rest of a message arrives with it.
    ZmqStatus s = recv(m, seen == 0 && dont_wait);
    if (!s.ok()) return s;
    ++seen;
    if (frames.size() < max_frames) frames.emplace_back(m.view());
    if (!m.more()) break;
  }
  if (frames_seen != nullptr) *frames_seen = seen;
  return frames;
}

ZmqResult<ZmqMonitorEvent> ZmqSocket::recv_monitor_event(bool dont_wait) {
  auto frames = recv_multipart(dont_wait, 2);
  if (!frames.ok()) return frames.status();
  const std::vector<std::string>& f = *frames;
  if (f[0].size() < 6) return ZmqStatus::failure("reading a monitor event (too short)", EPROTO);
  ZmqMonitorEvent e;
  std::memcpy(&e.event, f[0].data(), sizeof e.event);
  std::memcpy(&e.value, f[0].data() + 2, sizeof e.value);
  if (f.size() > 1) e.endpoint = f[1];
  return e;
}

ZmqResult<int> poll_sockets(std::span<ZmqPollItem> items, long timeout_ms) {
  zmq_pollitem_t raw[16];
  std::vector<zmq_pollitem_t> many;
  zmq_pollitem_t* p = raw;
  if (items.size() > std::size(raw)) {
    many.resize(items.size());
    p = many.data();
  }
  for (size_t i = 0; i < items.size(); ++i) {
    p[i] = zmq_pollitem_t{items[i].socket != nullptr ? items[i].socket->raw() : nullptr,
                          items[i].socket != nullptr ? -1 : items[i].fd, items[i].events, 0};
  }
  const int n = zmq_poll(p, static_cast<int>(items.size()), timeout_ms);
  if (n < 0) return last_error("zmq_poll");
  for (size_t i = 0; i < items.size(); ++i) items[i].revents = p[i].revents;
  return n;
}

}  // namespace fieldproof::lockstep
