// The client side: a DEALER socket behind a mutex, woken through the socket's ZMQ_FD.
//
// Why not a thread per link: every hop through another thread costs a context switch on each
// grant. Instead send() and receive() take the mutex only for non-blocking socket calls; a
// receive() that finds nothing waits in poll(2) on the socket's ZMQ_FD (edge-style: ZeroMQ may
// reset it during a send on another thread) plus an eventfd that send() writes when it notices
// that input became ready, so no wake-up is lost.
//
// Same host (ipc endpoints): the Hello offers shared memory, and frames go on the socket as usual
// until the switch. A Welcome that accepts names a sealed memfd of the coordinator
// (/proc/PID/fd/FD and a token); the link maps it, sends a second Hello (" +shm-ring") as its last
// frame on the socket and writes everything after it into its up ring; it reads the socket until
// the coordinator's answer to that Hello (a Welcome, its last frame on the socket) and the down
// ring after it (docs/protocol.md 5.1 item 5). Wake-ups are futexes (shm_ring.hpp); the socket
// stays open for liveness (its close is how each side learns that the other died). A Welcome that
// does not accept, or a segment that cannot be mapped, keeps the link on ZeroMQ.
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string_view>
#include <thread>

#include "fieldproof/lockstep/codec.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/mutex.hpp"
#include "shm_ring.hpp"
#include "zmq_common.hpp"

namespace fieldproof::lockstep {
namespace {

// The smallest ZMQ_HEARTBEAT_TIMEOUT a client sets (docs/protocol.md 6).
constexpr int kMinZmtpHeartbeatTimeoutMs = 1000;

class ZmqLink final : public Link {
 public:
  ZmqLink(const std::string& endpoint, const ConnectOptions& options)
      : options_(options), wall_(SystemClock::wall_now()) {
    std::string ep = zmqd::resolve_endpoint(endpoint, options.ipc_dir);
    connect_timeout_ = effective_connect_timeout(options);
    connect_deadline_ = wall_() + connect_timeout_;
    // Sockets close by themselves on a throw (RAII): nothing to undo here.
    socket_ = zmqd::open_socket(SocketType::kDealer, "creating a DEALER socket");
    {
      zmqd::check(socket_.set_linger(static_cast<int>(options.linger.ns() / 1'000'000)));
      // Never block a sender (it holds the link's mutex, which a receiver needs to learn that the
      // coordinator is gone): frames queue without limit while the coordinator is not reading.
      zmqd::check(socket_.set_send_high_water_mark(0));
      // No receive high-water mark either: the participant must read every grant anyway, and
      // libzmq 4.3.4 aborts the process (`Assertion failed: !_io_error
      // (src/stream_engine_base.cpp:331)`) when a socket whose input was throttled at the mark
      // restarts input after its connection failed (the Python client's fix, the same here).
      zmqd::check(socket_.set_receive_high_water_mark(0));
      // The decoder refuses larger frames anyway: ZeroMQ need not allocate them.
      zmqd::set_max_message_size(socket_, kDefaultMaxFrameBytes);
      zmqd::apply_client_curve(socket_, options.curve);
      if (options.heartbeat_interval > Duration::zero() &&
          !options.heartbeat_interval.is_infinite()) {
        // ZMTP heartbeats detect a peer that vanished without closing (a cut cable, a partition):
        // the session drops and the monitor below reports it. The timeout is ten intervals but
        // never below a second: with a 1 ms interval, 10 ms without the coordinator's I/O thread
        // being scheduled (a loaded machine) would drop a healthy connection.
        int ivl = static_cast<int>(std::max<int64_t>(1, options.heartbeat_interval.ns() / 1'000'000));
        zmqd::check(socket_.set_int(ZMQ_HEARTBEAT_IVL, ivl, "ZMQ_HEARTBEAT_IVL"));
        zmqd::check(socket_.set_int(ZMQ_HEARTBEAT_TIMEOUT,
                                    std::max(10 * ivl, kMinZmtpHeartbeatTimeoutMs),
                                    "ZMQ_HEARTBEAT_TIMEOUT"));
      }
      std::string mon = "inproc://fieldproof-link-monitor-" +
                        std::to_string(reinterpret_cast<uintptr_t>(this)) + "-" +
                        std::to_string(next_monitor_id());
      zmqd::check(
          socket_.monitor(mon, ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                   ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                   ZMQ_EVENT_HANDSHAKE_FAILED_AUTH),
          "monitoring the link");
      monitor_ = zmqd::open_socket(SocketType::kPair, "creating the link monitor");
      zmqd::check(monitor_.set_linger(0));
      zmqd::check(monitor_.connect(mon), "connecting the link monitor");
      ZmqResult<int> mfd = monitor_.fd();
      zmqd::check(mfd.status(), "ZMQ_FD");
      monitor_fd_ = *mfd;
      endpoint_ = ep;
      zmqd::check(socket_.connect(ep), "connecting to '" + ep + "'");
      ZmqResult<int> sfd = socket_.fd();
      zmqd::check(sfd.status(), "ZMQ_FD");
      zmq_fd_ = *sfd;
      wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
      if (wake_fd_ < 0) throw TransportError("eventfd failed");
      if (options.hello) {
        // Queued ahead of everything the participant sends (docs/protocol.md, the handshake).
        std::string client = "fieldproof-cpp " FIELDPROOF_LOCKSTEP_VERSION;
        if (options.shared_memory && ep.rfind("ipc://", 0) == 0 &&
            zmqd::shm_allowed_by_environment()) {
          client += zmqd::kShmOffer;
          mode_ = Mode::kOffered;
        }
        std::string hello = encode_frame(Hello{kProtocolVersion, std::move(client)});
        (void)socket_.send(hello, {.dont_wait = true});  // fails only with the socket gone
      }
    }
    if (options.heartbeat_interval > Duration::zero() && !options.heartbeat_interval.is_infinite()) {
      heartbeat_thread_ = std::thread([this] { heartbeat_loop(); });
    }
  }

  ~ZmqLink() override {
    close();
    if (wake_fd_ >= 0) ::close(wake_fd_);
  }

  void send(Frame frame) override {
    if (auto* a = std::get_if<Announce>(&frame); a != nullptr && !have_name_.load()) {
      MutexLock lock(name_mutex_);
      if (name_.empty()) name_ = a->participant;
      have_name_.store(true);
    }
    std::string bytes = encode_frame(frame);
    MutexLock lock(mutex_);
    if (closed_) return;
    send_locked(std::move(bytes));
    if (!std::holds_alternative<Control>(frame)) sent_any_ = true;
    sent_since_tick_.store(true, std::memory_order_relaxed);
  }

  std::optional<Frame> receive(Duration timeout) override {
    const bool forever = timeout.is_infinite();
    const SimTime deadline = forever ? SimTime::infinite() : wall_() + timeout;
    {
      MutexLock lock(mutex_);
      if (mode_ == Mode::kShm) return receive_shm(lock, forever, deadline);
    }
    ZmqMessage msg;
    while (true) {
      {
        MutexLock lock(mutex_);
        if (closed_) break;
        if (mode_ == Mode::kSwitching && !dropped_) {
          if (const Status s = out_->flush(); !s.ok()) {
            ring_failed("the coordinator's ring: " + s.message());
          }
        }
        while (socket_.recv(msg, /*dont_wait=*/true).ok()) {
          std::string_view bytes = msg.view();
          DecodeResult r = decode_frame(bytes);
          heard_ = true;
          if (r) {
            if (const auto* w = std::get_if<Welcome>(&r.frame())) {
              if (w->protocol_version == kProtocolVersion) {
                // The handshake is the link's business.
                if (mode_ == Mode::kOffered) {
                  on_offer(w->coordinator);
                } else if (mode_ == Mode::kSwitching) {
                  // The coordinator's last frame on the socket: the down ring from here on.
                  mode_ = Mode::kShm;
                  return receive_shm(lock, forever, deadline);
                }
                continue;
              }
              return Frame{version_mismatch(w->protocol_version)};
            }
            if (const auto* e = std::get_if<Error>(&r.frame());
                e != nullptr && e->code == ErrorCode::kVersion) {
              return Frame{version_refused(e->reason)};
            }
            if (const auto* e = std::get_if<Error>(&r.frame());
                e != nullptr && e->code == ErrorCode::kShutdown) {
              if (shutdown_delivered_) continue;
              shutdown_delivered_ = true;
            }
            return std::move(r).frame();
          }
          // A coordinator never sends garbage; a frame we cannot read is surfaced as an Error so
          // the participant sees it rather than hanging.
          if (r.error().code == ErrorCode::kVersion) {
            std::optional<uint32_t> v = wire_version(bytes);
            return Frame{version_mismatch(v.value_or(0))};
          }
          return Frame{Error{r.error().code, "undecodable frame from the coordinator: " +
                                                 r.error().reason}};
        }
        if (connection_dropped() && !shutdown_delivered_) {
          shutdown_delivered_ = true;
          return Frame{Error{ErrorCode::kShutdown, drop_reason_}};
        }
        if (!heard_ && !shutdown_delivered_ && wall_() >= connect_deadline_) {
          shutdown_delivered_ = true;
          return Frame{Error{ErrorCode::kShutdown,
                             "no coordinator answered at " + endpoint_ + " within " +
                                 format_seconds(connect_timeout_) +
                                 " s (the connect timeout: ConnectOptions::connect_timeout or " +
                                 kConnectTimeoutEnv + "); is the coordinator running there?"}};
        }
      }
      int wait_ms = 10;  // cap: ZMQ_FD is edge-style, recheck now and then (and the deadline)
      if (!forever) {
        Duration left = deadline - wall_();
        if (left <= Duration::zero()) break;
        int64_t ms = (left.ns() + 999'999) / 1'000'000;
        if (ms < wait_ms) wait_ms = static_cast<int>(ms);
      }
      pollfd fds[3] = {{zmq_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}, {monitor_fd_, POLLIN, 0}};
      ::poll(fds, 3, wait_ms);
      if (fds[1].revents & POLLIN) {
        uint64_t v = 0;
        [[maybe_unused]] auto n = ::read(wake_fd_, &v, sizeof v);
      }
    }
    return std::nullopt;
  }

  void close() override {
    {
      MutexLock lock(mutex_);
      if (closed_) return;
      closed_ = true;
      flush_to_coordinator();
      if (in_) in_->wake();  // a receive() waiting on the ring (mapped until destruction)
      (void)socket_.monitor("", 0);  // best effort: the socket closes just below
      monitor_.close();
      // No lingering once flushed (or given up on): libzmq 4.3.4 aborts the process ("Assertion
      // failed: !_io_error", stream_engine_base.cpp:331) when a socket lingering after zmq_close
      // gets data and the peer's close in one wake (a coordinator ending its run sends an Error
      // to everyone and exits): the engine stops reading and its heartbeat timer then writes on
      // the failed connection.
      (void)socket_.set_linger(0);  // cannot fail on an open socket
      socket_.close();
    }
    {
      MutexLock lock(hb_mutex_);
      stop_heartbeat_ = true;
    }
    hb_cv_.notify_all();
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
    if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  }

 private:
  enum class Mode : uint8_t {
    kZmq,        // every frame on the socket
    kOffered,    // Hello offered shared memory; frames on the socket until the Welcome says
    kSwitching,  // sending into the up ring, reading the socket until the switch's Welcome
    kShm,        // every frame through the rings
  };

  // With mutex_ held: one frame on the socket, never blocking (no high-water mark: a frame only
  // fails to queue when the socket is gone). False when it failed.
  bool send_dont_wait(std::string_view bytes) FIELDPROOF_REQUIRES(mutex_) {
    return socket_.send(bytes, {.dont_wait = true}).ok();
  }

  // With mutex_ held: one encoded frame out by the link's current mode.
  void send_locked(std::string bytes) FIELDPROOF_REQUIRES(mutex_) {
    if (mode_ == Mode::kZmq || mode_ == Mode::kOffered) {
      send_dont_wait(bytes);
      signal_if_readable();
      return;
    }
    if (const Status s = out_->push(std::move(bytes)); !s.ok()) {
      ring_failed("the coordinator's ring: " + s.message());
    }
  }

  // With mutex_ held: the Welcome of an offered link. Maps the segment it names and switches, or
  // stays on ZeroMQ.
  void on_offer(const std::string& coordinator) FIELDPROOF_REQUIRES(mutex_) {
    std::string why = "the coordinator did not accept shared memory";
    const size_t at = coordinator.rfind(zmqd::kShmAccept);
    if (at != std::string::npos) {
      // "PATH:TOKEN;BELL_PATH:BELL_TOKEN": the connection's segment, the coordinator's doorbell.
      const std::string spec = coordinator.substr(at + zmqd::kShmAccept.size());
      const size_t semi = spec.find(';');
      auto open_one = [&](const std::string& part) -> std::unique_ptr<shm::Segment> {
        const size_t colon = part.rfind(':');
        if (colon == std::string::npos || part.rfind("/proc/", 0) != 0) {
          why = "the coordinator named no segment: '" + part + "'";
          return nullptr;
        }
        Result<std::unique_ptr<shm::Segment>> opened =
            shm::Segment::open(part.substr(0, colon), part.substr(colon + 1));
        if (!opened.ok()) {
          why = opened.status().message();
          return nullptr;
        }
        return std::move(opened).value();
      };
      if (semi == std::string::npos) {
        why = "the coordinator named no doorbell: '" + spec + "'";
      } else {
        segment_ = open_one(spec.substr(0, semi));
        if (segment_) bell_ = open_one(spec.substr(semi + 1));
        if (!bell_) segment_.reset();
      }
    }
    if (!segment_) {
      shm_refusal_ = why;  // the coordinator keeps its unused segment until the connection ends
      mode_ = Mode::kZmq;
      return;
    }
    const uint32_t rb = segment_->ring_bytes();
    out_ = std::make_unique<shm::Producer>(segment_->up(), segment_->up_data(), rb, &bell_->up());
    in_ = std::make_unique<shm::Consumer>(segment_->down(), segment_->down_data(), rb,
                                          kDefaultMaxFrameBytes + zmqd::kMaxMessageSlack);
    std::string hello = encode_frame(Hello{
        kProtocolVersion, std::string("fieldproof-cpp " FIELDPROOF_LOCKSTEP_VERSION) +
                              std::string(zmqd::kShmSwitch)});
    send_dont_wait(hello);
    signal_if_readable();
    mode_ = Mode::kSwitching;
  }

  // With mutex_ held: the rings cannot be used any more; the participant is told once.
  void ring_failed(const std::string& why) {
    dropped_ = true;
    if (drop_reason_.empty()) drop_reason_ = "shared memory with the coordinator at " + endpoint_ +
                                             " is corrupt: " + why;
  }

  // receive() on the rings. `lock` (of mutex_) held on entry, released while waiting. Not analysed
  // inside (a scoped lock passed by reference); callers are checked to hold mutex_.
  std::optional<Frame> receive_shm(MutexLock& lock, bool forever, SimTime deadline)
      FIELDPROOF_REQUIRES(mutex_) FIELDPROOF_NO_THREAD_SAFETY_ANALYSIS {
    std::string bytes;
    while (true) {
      if (closed_) break;
      if (!dropped_) {
        if (const Status s = out_->flush(); !s.ok()) {
          ring_failed("the coordinator's ring: " + s.message());
        }
      }
      while (!dropped_) {
        const shm::Next n = in_->next(bytes);
        if (n == shm::Next::kEmpty) break;
        if (n == shm::Next::kCorrupt) {
          ring_failed(in_->status().message());
          break;
        }
        heard_ = true;
        DecodeResult r = decode_frame(bytes);
        if (!r) {
          return Frame{Error{r.error().code,
                             "undecodable frame from the coordinator: " + r.error().reason}};
        }
        if (std::holds_alternative<Welcome>(r.frame())) continue;
        if (const auto* e = std::get_if<Error>(&r.frame());
            e != nullptr && e->code == ErrorCode::kShutdown) {
          if (shutdown_delivered_) continue;
          shutdown_delivered_ = true;
        }
        return std::move(r).frame();
      }
      // A short spin first (the grant often follows within microseconds): only when nothing
      // came is the monitor read (a ZeroMQ receive: system calls) and the ring's futex slept on.
      if (!dropped_ && out_->pending() == 0) {
        lock.unlock();
        const bool came = in_->spin_for_data(kSpinRounds);
        lock.lock();
        if (came) continue;
      }
      if ((connection_dropped() || dropped_) && !shutdown_delivered_) {
        shutdown_delivered_ = true;
        return Frame{Error{ErrorCode::kShutdown, drop_reason_}};
      }
      Duration slice = out_->pending() > 0 ? milliseconds(1) : milliseconds(10);
      if (!forever) {
        Duration left = deadline - wall_();
        if (left <= Duration::zero()) break;
        if (left < slice) slice = left;
      }
      lock.unlock();
      // A slice bounds how late a dropped connection (the monitor) is seen.
      in_->wait(slice);
      lock.lock();
    }
    return std::nullopt;
  }

  // With mutex_ held, before the socket closes: makes sure what was sent (the Leave) reached the
  // coordinator. The context is never terminated, so ZMQ_LINGER does not hold a process that
  // exits right after close(); a Leave still queued would be lost and the coordinator, which
  // notices the closed connection at once, would take the exit for a crash. A status request
  // answered proves every earlier frame of this connection arrived (frames keep their order).
  // Bounded by options_.linger; skipped when no participant frame was sent (a control client:
  // the engine records every control request) or the coordinator is gone.
  void flush_to_coordinator() FIELDPROOF_REQUIRES(mutex_) {
    if (!sent_any_ || !heard_ || dropped_ || options_.linger <= Duration::zero()) return;
    if (mode_ == Mode::kShm || mode_ == Mode::kSwitching) {
      flush_rings();
      return;
    }
    const std::string bytes = encode_frame(Frame{Control{}});  // a status request
    if (!send_dont_wait(bytes)) return;
    const SimTime deadline = wall_() + options_.linger;
    ZmqMessage msg;
    while (true) {
      if (socket_.recv(msg, /*dont_wait=*/true).ok()) {
        DecodeResult r = decode_frame(msg.view());
        if (r && std::holds_alternative<ControlReply>(r.frame())) break;
        continue;
      }
      const Duration left = deadline - wall_();
      if (left <= Duration::zero()) break;
      // A failed poll (a signal) only shortens this wait: the loop checks the deadline.
      (void)socket_.poll(ZmqPoll::kIn, static_cast<long>(std::min<int64_t>(
                                           10, (left.ns() + 999'999) / 1'000'000)));
    }
  }

  // flush_to_coordinator() on the rings: the status request and its reply through them.
  void flush_rings() {
    if (!out_->push(encode_frame(Frame{Control{}})).ok()) return;
    const SimTime deadline = wall_() + options_.linger;
    std::string bytes;
    while (true) {
      if (!out_->flush().ok()) return;
      const shm::Next n = in_->next(bytes);
      if (n == shm::Next::kCorrupt) return;
      if (n == shm::Next::kFrame) {
        DecodeResult r = decode_frame(bytes);
        if (r && std::holds_alternative<ControlReply>(r.frame())) return;
        continue;
      }
      if (connection_dropped()) return;
      const Duration left = deadline - wall_();
      if (left <= Duration::zero()) return;
      in_->wait(std::min(left, milliseconds(10)));
    }
  }

  // Called with mutex_ held after a socket operation: if input is ready, the ZMQ_FD edge may be
  // gone, so wake any receiver through the eventfd.
  void signal_if_readable() FIELDPROOF_REQUIRES(mutex_) {
    ZmqResult<int> events = socket_.events();
    if (events.ok() && (*events & ZmqPoll::kIn)) {
      uint64_t one = 1;
      [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
    }
  }

  // With mutex_ held: whether the monitor reported that an established session dropped (the
  // coordinator died or the network failed). ZeroMQ would reconnect, but the coordinator's state
  // for this connection is gone, so the run is over for this participant.
  bool connection_dropped() {
    bool dropped = false;
    while (true) {
      ZmqResult<ZmqMonitorEvent> ev = monitor_.recv_monitor_event(/*dont_wait=*/true);
      if (!ev.ok()) {
        if (ev.status().error() == EPROTO) continue;  // malformed (never from libzmq): read on
        break;                                        // nothing more (or the monitor is closed)
      }
      const uint16_t event = ev->event;
      if (event == ZMQ_EVENT_DISCONNECTED) {
        if (drop_reason_.empty()) {
          drop_reason_ = "lost the connection to the coordinator at " + endpoint_;
        }
        dropped = true;
      } else if (event != 0) {
        if (drop_reason_.empty()) {
          drop_reason_ = "the coordinator at " + endpoint_ +
                         " refused the connection: security handshake failed (with CURVE the "
                         "client needs the server's public key)";
        }
        dropped = true;
      }
    }
    dropped_ = dropped_ || dropped;
    return dropped_;
  }

  static Error version_mismatch(uint32_t theirs) {
    return Error{ErrorCode::kVersion, "the coordinator speaks protocol version " +
                                          std::to_string(theirs) + "; this client speaks version " +
                                          std::to_string(kProtocolVersion)};
  }

  // Error{kVersion} from the coordinator: name its version when its reason says it ("... this
  // coordinator speaks version N", docs/protocol.md), keep its words either way.
  static Error version_refused(const std::string& reason) {
    static constexpr std::string_view kSpeaks = "speaks version ";
    size_t at = reason.find(kSpeaks);
    std::string digits;
    if (at != std::string::npos) {
      for (size_t i = at + kSpeaks.size();
           i < reason.size() && reason[i] >= '0' && reason[i] <= '9'; ++i) {
        digits += reason[i];
      }
    }
    if (digits.empty() || digits.size() > 9) {
      return Error{ErrorCode::kVersion, "the coordinator refused protocol version " +
                                            std::to_string(kProtocolVersion) +
                                            " of this client: " + reason};
    }
    Error e = version_mismatch(static_cast<uint32_t>(std::stoul(digits)));
    e.reason += " (the coordinator said: " + reason + ")";
    return e;
  }

  static uint64_t next_monitor_id() {
    static std::atomic<uint64_t> id{0};
    return id.fetch_add(1);
  }

  void heartbeat_loop() {
    const auto interval = std::chrono::nanoseconds(options_.heartbeat_interval.ns());
    MutexLock hb(hb_mutex_);
    while (!stop_heartbeat_) {
      hb_cv_.wait_for(hb_mutex_, interval,
                      [this]() FIELDPROOF_REQUIRES(hb_mutex_) { return stop_heartbeat_; });
      if (stop_heartbeat_) break;
      if (sent_since_tick_.exchange(false, std::memory_order_relaxed)) continue;
      std::string name;
      {
        MutexLock lock(name_mutex_);
        name = name_;
      }
      if (name.empty()) continue;
      std::string bytes = encode_frame(Heartbeat{name});
      MutexLock lock(mutex_);
      if (closed_) break;
      send_locked(std::move(bytes));
    }
  }

  static constexpr int kSpinRounds = 200;  // about 1 to 3 us of pause instructions

  ConnectOptions options_;
  WallNow wall_;
  Mutex mutex_;  // guards socket_ and closed_
  ZmqSocket socket_ FIELDPROOF_GUARDED_BY(mutex_);
  bool closed_ FIELDPROOF_GUARDED_BY(mutex_) = false;
  ZmqSocket monitor_;  // PAIR receiving the DEALER's DISCONNECTED events
  std::string endpoint_;
  bool dropped_ = false;
  std::string drop_reason_;
  bool shutdown_delivered_ = false;  // Error{kShutdown} goes to the participant once
  bool heard_ FIELDPROOF_GUARDED_BY(mutex_) = false;  // a frame came from the coordinator
  bool sent_any_ = false;  // a participant frame went out (a control client has none to flush)
  Duration connect_timeout_;
  SimTime connect_deadline_;
  int zmq_fd_ = -1;
  int monitor_fd_ = -1;
  int wake_fd_ = -1;

  // Same-host shared memory (guarded by mutex_; the segment stays mapped until destruction, so a
  // receive() waking from the futex after close() touches valid memory).
  Mode mode_ = Mode::kZmq;
  std::unique_ptr<shm::Segment> segment_;
  std::unique_ptr<shm::Segment> bell_;  // the coordinator's doorbell (rung after each write)
  std::unique_ptr<shm::Producer> out_;
  std::unique_ptr<shm::Consumer> in_;
  std::string shm_refusal_;  // why the link stayed on ZeroMQ (for a debugger)

  Mutex name_mutex_;
  // The participant the heartbeats speak for (from the first Announce).
  std::string name_ FIELDPROOF_GUARDED_BY(name_mutex_);
  std::atomic<bool> have_name_{false};
  std::atomic<bool> sent_since_tick_{false};
  Mutex hb_mutex_;
  CondVar hb_cv_;
  bool stop_heartbeat_ FIELDPROOF_GUARDED_BY(hb_mutex_) = false;
  std::thread heartbeat_thread_;
};

}  // namespace

Duration effective_connect_timeout(const ConnectOptions& options) {
  if (options.connect_timeout) return *options.connect_timeout;
  const char* env = std::getenv(kConnectTimeoutEnv);
  if (env == nullptr || *env == '\0') return seconds(10);
  Result<Duration> d = parse_duration(env);
  if (!d.ok() || *d <= Duration::zero()) {
    throw TransportError(std::string(kConnectTimeoutEnv) + "='" + env +
                         "' is not a positive duration (e.g. 10s, 500ms)" +
                         (d.ok() ? "" : ": " + d.status().message()));
  }
  return *d;
}

std::unique_ptr<Link> connect(const std::string& endpoint, const ConnectOptions& options) {
  return std::make_unique<ZmqLink>(endpoint, options);
}

}  // namespace fieldproof::lockstep
