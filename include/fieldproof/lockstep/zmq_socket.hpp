// A small RAII wrapper over libzmq's C API: a context, a socket with its options, bind/connect,
// send and receive of (multipart) frames, poll. Every failure is a value (ZmqStatus /
// ZmqResult<T>) carrying what was being done and zmq_strerror's text; nothing here throws, so a
// server loop decides itself what an error means (a full queue, a timeout, a peer gone).
//
//   auto ctx = ZmqContext::create();                  // or ZmqContext::process()
//   auto rep = ZmqSocket::open(*ctx, SocketType::kRep);
//   if (!rep.ok()) return rep.status().message();     // "creating a socket: Too many open files"
//   ZmqSocket s = std::move(rep).value();
//   if (ZmqStatus b = s.bind("ipc:///tmp/x.sock"); !b.ok()) ...
//   auto frames = s.recv_multipart();                 // a request; s.send_multipart({...}) replies
//
// The header does not include zmq.h (libzmq stays a private dependency of the lockstep part):
// the common options have named setters; code that includes zmq.h itself may pass any option
// number to set_int / set_int64 / set_bytes / get_int.
//
// Threads: a ZmqSocket is used by one thread at a time (libzmq's rule); a ZmqContext is
// thread-safe. Destroying a socket closes it; destroying an owned context terminates it (after its
// sockets are closed: destroy sockets first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fieldproof::lockstep {

// The outcome of a ZeroMQ call: ok, or errno and "<what>: <zmq_strerror(errno)>".
class [[nodiscard]] ZmqStatus {
 public:
  ZmqStatus() = default;
  ZmqStatus(int error, std::string message) : error_(error), message_(std::move(message)) {}
  // A failure of `what` with errno `error`: the message is "<what>: <zmq_strerror(error)>".
  static ZmqStatus failure(std::string_view what, int error);

  bool ok() const { return error_ == 0; }
  int error() const { return error_; }  // the errno value (0 when ok)
  const std::string& message() const { return message_; }
  // Non-blocking call with nothing to do, or a receive/send timeout (EAGAIN).
  bool would_block() const;
  // The call was interrupted by a signal (EINTR).
  bool interrupted() const;

 private:
  int error_ = 0;
  std::string message_;
};

// A value or the ZmqStatus explaining its absence.
template <typename T>
class [[nodiscard]] ZmqResult {
 public:
  ZmqResult(T value) : v_(std::move(value)) {}            // NOLINT(google-explicit-constructor)
  ZmqResult(ZmqStatus status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  ZmqStatus status() const { return ok() ? ZmqStatus() : std::get<1>(v_); }

 private:
  std::variant<T, ZmqStatus> v_;
};

class ZmqContext {
 public:
  // A context of its own (terminated by the destructor).
  static ZmqResult<ZmqContext> create();
  // The process-wide context, created on first use and never terminated (terminating it at static
  // destruction would wait for sockets other statics may still hold). One I/O thread, not blocky;
  // FIELDPROOF_ZMQ_IO_THREADS=N sets more, for a process serving many sockets. When it could not
  // be created, every socket opened on it fails with the reason.
  static ZmqContext& process();

  ZmqContext() = default;  // no context: opening a socket on it fails
  ~ZmqContext();
  ZmqContext(ZmqContext&& o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)), owned_(o.owned_) {}
  ZmqContext& operator=(ZmqContext&& o) noexcept;
  ZmqContext(const ZmqContext&) = delete;
  ZmqContext& operator=(const ZmqContext&) = delete;

  bool valid() const { return ctx_ != nullptr; }
  // libzmq's handle (for zmq_socket_monitor peers and the like inside the lockstep part).
  void* raw() const { return ctx_; }

 private:
  ZmqContext(void* ctx, bool owned) : ctx_(ctx), owned_(owned) {}
  void* ctx_ = nullptr;
  bool owned_ = false;
};

enum class SocketType { kPair, kReq, kRep, kDealer, kRouter };

// One received frame, without a copy (libzmq's zmq_msg_t). Reusable: each receive replaces it.
class ZmqMessage {
 public:
  ZmqMessage();
  ~ZmqMessage();
  ZmqMessage(const ZmqMessage&) = delete;
  ZmqMessage& operator=(const ZmqMessage&) = delete;

  std::string_view view() const;
  std::string str() const { return std::string(view()); }
  size_t size() const;
  // Whether more frames of the same message follow.
  bool more() const;
  // The file descriptor of the connection it came from (ZMQ_SRCFD), -1 when unknown.
  int source_fd() const;

 private:
  friend class ZmqSocket;
  void* msg() { return storage_; }
  const void* msg() const { return storage_; }
  alignas(8) unsigned char storage_[64];  // a zmq_msg_t (its size is checked in the .cpp)
};

// One event of a socket monitor (zmq_socket_monitor's two-frame message): ZMQ_EVENT_* and its
// value (a file descriptor, an errno or an interval, by event), and the endpoint it concerns.
struct ZmqMonitorEvent {
  uint16_t event = 0;
  uint32_t value = 0;
  std::string endpoint;
};

struct SendFlags {
  bool more = false;       // another frame of the same message follows
  bool dont_wait = false;  // fail with would_block() instead of waiting for room
};

class ZmqSocket {
 public:
  static ZmqResult<ZmqSocket> open(ZmqContext& context, SocketType type);

  ZmqSocket() = default;  // no socket
  ~ZmqSocket() { close(); }
  ZmqSocket(ZmqSocket&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  ZmqSocket& operator=(ZmqSocket&& o) noexcept;
  ZmqSocket(const ZmqSocket&) = delete;
  ZmqSocket& operator=(const ZmqSocket&) = delete;

  bool valid() const { return s_ != nullptr; }
  // libzmq's handle, for the few calls this wrapper leaves out (inside the lockstep part).
  void* raw() const { return s_; }
  // Closes now (idempotent).
  void close();

  // Options by number (zmq.h's ZMQ_*); `name` names it in the error message.
  ZmqStatus set_int(int option, int value, std::string_view name);
  ZmqStatus set_int64(int option, int64_t value, std::string_view name);
  ZmqStatus set_bytes(int option, std::string_view value, std::string_view name);
  ZmqResult<int> get_int(int option, std::string_view name) const;
  // The common ones by name.
  ZmqStatus set_linger(int ms);
  ZmqStatus set_receive_timeout(int ms);
  ZmqStatus set_send_timeout(int ms);
  ZmqStatus set_send_high_water_mark(int messages);
  ZmqStatus set_receive_high_water_mark(int messages);
  ZmqStatus set_identity(std::string_view routing_id);
  // The file descriptor to poll(2) for ZeroMQ events (edge-triggered: read events() after).
  ZmqResult<int> fd() const;
  // ZMQ_EVENTS: whether a frame can be read / written now (ZmqPoll::kIn / kOut bits).
  ZmqResult<int> events() const;
  // Waits up to `timeout_ms` (-1: forever) for `events` (ZmqPoll::kIn / kOut bits): the bits that
  // are ready, 0 at the timeout. A signal is an interrupted() failure, to retry or not.
  ZmqResult<short> poll(short events, long timeout_ms);
  // ZMQ_LAST_ENDPOINT: the endpoint bound last (with the port a "tcp://host:*" picked).
  ZmqResult<std::string> last_endpoint() const;

  ZmqStatus bind(const std::string& endpoint);
  ZmqStatus connect(const std::string& endpoint);
  // Socket events published on a PAIR endpoint (zmq_socket_monitor); an empty endpoint stops it.
  ZmqStatus monitor(const std::string& endpoint, int events);

  // One frame.
  ZmqStatus send(std::string_view frame, SendFlags flags = {});
  // A whole message, frame by frame (dont_wait applies to every frame). Stops at the first
  // failure: the frames sent before it are libzmq's to discard with the incomplete message.
  ZmqStatus send_multipart(std::span<const std::string_view> frames, bool dont_wait = false);
  ZmqStatus send_multipart(std::initializer_list<std::string_view> frames, bool dont_wait = false);

  // One frame into `m` (its more() says whether the message goes on).
  ZmqStatus recv(ZmqMessage& m, bool dont_wait = false);
  // A whole message: every frame, up to `max_frames` kept (the rest read and dropped, so the
  // next receive starts at a message boundary; the count of frames is in `frames_seen` if given).
  ZmqResult<std::vector<std::string>> recv_multipart(bool dont_wait = false,
                                                     size_t max_frames = SIZE_MAX,
                                                     size_t* frames_seen = nullptr);
  // On the PAIR socket connected to a monitor() endpoint: the next event, whole (every frame of
  // it read, so the next call starts at an event). A message too short to hold an event is an
  // EPROTO failure.
  ZmqResult<ZmqMonitorEvent> recv_monitor_event(bool dont_wait = false);

 private:
  explicit ZmqSocket(void* s) : s_(s) {}
  void* s_ = nullptr;
};

// zmq_poll over sockets and file descriptors.
struct ZmqPollItem {
  ZmqSocket* socket = nullptr;  // or nullptr and a file descriptor:
  int fd = -1;
  short events = 0;   // ZmqPoll::kIn | kOut
  short revents = 0;  // set by poll
};

struct ZmqPoll {
  static constexpr short kIn = 1;   // ZMQ_POLLIN
  static constexpr short kOut = 2;  // ZMQ_POLLOUT
  static constexpr short kErr = 4;  // ZMQ_POLLERR
};

// The number of items with events, 0 at the timeout (ms; -1 waits forever).
ZmqResult<int> poll_sockets(std::span<ZmqPollItem> items, long timeout_ms);

}  // namespace fieldproof::lockstep
