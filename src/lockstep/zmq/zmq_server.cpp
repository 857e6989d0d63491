// The coordinator server loop: zmq_poll over the ROUTER sockets, the parent link (cascade), the
// security monitor and an eventfd for requests from other threads; core.poll() when it asks.
//
// Local links (make_local_link): participants in the server's own process run the core
// synchronously on their own thread, under the server's lock (hub_->mu), as the in-process
// transport does: no encoding, no socket, no thread hop. The server thread holds the same lock
// whenever it is not waiting in zmq_poll, so the core, the peer tables and the callbacks are only
// ever used by one thread at a time. Sockets stay the server thread's alone: a frame the core
// sends to a socket peer while a local thread runs it is encoded into remote_out_ and the server
// thread is woken (eventfd) to send it, in order, before anything it sends itself.
#include "fieldproof/lockstep/zmq_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <future>
#include <optional>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "fieldproof/lockstep/cascade.hpp"
#include "fieldproof/lockstep/codec.hpp"
#include "../frame_ring.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/mutex.hpp"
#include "refusal_log.hpp"
#include "shm_ring.hpp"
#include "zap.hpp"
#include "zmq_common.hpp"

namespace fieldproof::lockstep {

namespace {

constexpr int kMaxBatch = 512;
constexpr int kMonitorBatch = 256;  // monitor events taken before looking at the sockets again
// The child's own thread at its parent (carries the local minimum) and the thread under which it
// mirrors each local participant's name there.
constexpr const char* kCascadeThread = "cascade";
constexpr const char* kMirrorThread = "~cascade";  // frames drained from one socket before looking at the others
// What Welcome (and a child's Hello to its parent) calls this program.
constexpr const char* kCoordinatorName = "fieldproof-coordinator " FIELDPROOF_LOCKSTEP_VERSION;

// A connection on the same-host transport (docs/lockstep.md, "Same-host shared memory"): its
// segment and the two rings. One reader thread per server serves every such connection: it sleeps
// on the server's doorbell (a futex every participant rings after writing into its up ring) and
// serves what it finds under the hub's lock, as a local link's thread does. The ZeroMQ connection
// stays open: its close event is the crash detection, as for every ipc peer.
struct ShmPeer {
  std::unique_ptr<shm::Segment> seg;
  std::unique_ptr<shm::Consumer> up;    // participant -> coordinator
  std::unique_ptr<shm::Producer> down;  // coordinator -> participant
  std::atomic<bool> closed{false};
  std::atomic<bool> down_pending{false};  // frames wait for room in the down ring
  std::string in;                         // the frame being read (hub lock held)
};

// Where a connection stands in the handshake (docs/protocol.md, 5.1).
enum class HelloState : uint8_t { kNone, kAccepted, kRefused };

struct Peer {
  ZmqSocket* socket = nullptr;  // the ROUTER it came on (the server's router_ or control_)
  std::string routing_id;
  int fd = -1;  // the connection's file descriptor (ZMQ_SRCFD), -1 when unknown
  HelloState hello = HelloState::kNone;
  uint32_t refused_version = 0;  // the version a kRefused peer spoke
  // Floods: who the peer is for the rate-limited log (its host, "conn N" when unknown), its
  // refused frames in a row, and whether it was dropped (its frames are then discarded).
  std::string host;
  uint32_t refusals_in_row = 0;
  bool dropped = false;
  std::shared_ptr<ShmPeer> shm;          // on the same-host transport since its switch
  std::shared_ptr<ShmPeer> shm_offered;  // a segment named in its Welcome, not switched to yet
};

// Where a connection comes from: `text` for the log, `host` for rate limiting (a refused peer
// reconnects from a new tcp port every time).
struct PeerAddress {
  std::string text = "(address unknown)";
  std::string host;  // empty when unknown
};

PeerAddress peer_address(int fd) {
  PeerAddress a;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return a;
  char ip[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
    a.host = ip;
    a.text = a.host + ":" + std::to_string(ntohs(in->sin_port));
  } else if (ss.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
    a.host = ip;
    a.text = "[" + a.host + "]:" + std::to_string(ntohs(in6->sin6_port));
  } else if (ss.ss_family == AF_UNIX) {
    ucred cred{};
    socklen_t clen = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0) {
      a.host = "ipc pid " + std::to_string(cred.pid);
      a.text = a.host + " (uid " + std::to_string(cred.uid) + ")";
    } else {
      a.text = "an ipc peer";
      a.host = "ipc";
    }
  }
  return a;
}

// One monitored ROUTER: its monitor PAIR, what it is bound to (for log lines) and the accepted
// connections whose security handshake has not ended yet, oldest first.
struct Monitor {
  ZmqSocket pair;
  ZmqSocket* socket = nullptr;
  std::string endpoint;
  std::deque<std::pair<int, PeerAddress>> handshaking;
};

// Refusals the ZAP handler thread reports, taken by the server thread when the matching
// handshake failure event arrives (the handler reports before it answers, so it is there).
struct ZapSink {
  Mutex mutex;
  std::deque<zmqd::ZapRefusal> refusals FIELDPROOF_GUARDED_BY(mutex);
};

std::string version_refusal(uint32_t version) {
  return "protocol version " + std::to_string(version) +
         " is not supported: this coordinator speaks version " + std::to_string(kProtocolVersion);
}

// The answer to a PlayerControl: a control tool (fieldproof clock) asks it to tell a player from
// a coordinator, so it is answered without being logged or counted as a bad frame.
Error not_a_player() {
  return Error{ErrorCode::kUnknownKind,
               "a player-control frame is for a player's control endpoint (fieldproof play "
               "--control EP); this is a coordinator"};
}

constexpr const char* kPlayerReplyRefusal =
    "a player-reply frame is a player's answer to a control tool, never sent to a coordinator";

std::string kind_of(std::string_view bytes) {
  if (bytes.size() < 2) return "?";
  return frame_kind_name(static_cast<FrameKind>(static_cast<uint8_t>(bytes[1])));
}

// A local link's inbox (guarded by the hub's mutex).
struct LocalQueue {
  detail::FrameRing frames;
  CondVar cv;
  bool closed = false;
};

}  // namespace

// What a local link shares with its server: the lock over the core and, while the server runs,
// the server itself. A link may outlive the server: `shut` then makes it deliver Error{kShutdown}
// and nothing else.
struct CoordinatorServer::LocalHub {
  Mutex mu;
  bool shut FIELDPROOF_GUARDED_BY(mu) = false;
  CoordinatorServer::Impl* impl FIELDPROOF_GUARDED_BY(mu) = nullptr;  // valid while !shut
};

class CoordinatorServer::Impl {
 public:
  explicit Impl(ServerOptions options) : options_(std::move(options)) {
    if (options_.bind.empty()) {
      throw TransportError("the coordinator needs at least one endpoint to bind (--bind EP)");
    }
    if (options_.core.max_message_bytes == 0 || options_.receive_hwm <= 0 ||
        options_.send_hwm <= 0 || options_.max_refusals_in_row == 0) {
      throw TransportError(
          "max_message_bytes, receive_hwm, send_hwm and max_refusals_in_row must be > 0");
    }
    if (!options_.core.wall_now) options_.core.wall_now = SystemClock::wall_now();
    shm_allowed_ = options_.shared_memory && zmqd::shm_allowed_by_environment();
    wall_ = options_.core.wall_now;
    if (!options_.curve_secret_key.empty()) {
      curve_public_ = lockstep::curve_public_key(options_.curve_secret_key);
    }
    if (options_.authorized_keys) make_zap();
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) throw TransportError("eventfd failed");
    try {
      router_ = make_router();
      for (const auto& ep : options_.bind) endpoints_.push_back(bind(router_, ep));
      if (!options_.control.empty()) {
        control_ = make_router();
        control_endpoint_ = bind(control_, options_.control);
      }
      make_monitor(router_, endpoints_.front());
      if (control_.valid()) make_monitor(control_, control_endpoint_);
      make_core();
      if (!options_.parent.empty()) make_parent();
    } catch (...) {
      close_sockets();
      ::close(wake_fd_);
      throw;
    }
    hub_->impl = this;
    thread_ = std::thread([this] { run(); });
  }

  ~Impl() {
    stop();
    ::close(wake_fd_);
  }

  void stop() {
    if (stopping_.exchange(true)) {
      if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
      return;
    }
    wake();
    if (thread_.joinable()) thread_.join();
  }

  ControlReply control(const Control& request) {
    return on_server_thread([this, request] { return core_->control(request); });
  }

  ControlReply forget(const std::string& participant) {
    return on_server_thread([this, participant] { return core_->forget(participant); });
  }

  // Runs `task` on the server's thread (the only one that touches the core) and waits for it.
  template <typename Task>
  ControlReply on_server_thread(Task task) {
    auto promise = std::make_shared<std::promise<ControlReply>>();
    auto future = promise->get_future();
    {
      MutexLock lock(tasks_mutex_);
      if (stopped_) {
        ControlReply r;
        r.ok = false;
        r.error = "the coordinator server has stopped";
        return r;
      }
      tasks_.push_back([task, promise] { promise->set_value(task()); });
    }
    wake();
    return future.get();
  }

  const std::vector<std::string>& endpoints() const { return endpoints_; }
  const std::string& control_endpoint() const { return control_endpoint_; }
  const std::string& curve_public_key() const { return curve_public_; }
  uint64_t refused_peers() const { return refused_.load(); }
  uint64_t bad_frames() const { return bad_frames_.load(); }
  uint64_t dropped_peers() const { return dropped_.load(); }
  uint64_t shm_connections() const { return shm_connections_.load(); }

  const std::shared_ptr<LocalHub>& hub() const { return hub_; }
  bool is_child() const { return parent_.valid(); }

  // ---- local links (hub_->mu held by the caller) ------------------------------------------------

  // A new local connection: its id and its inbox.
  std::pair<ConnId, std::shared_ptr<LocalQueue>> open_local() {
    auto q = std::make_shared<LocalQueue>();
    const ConnId c = next_conn_++;
    locals_.emplace(c, q);
    return {c, std::move(q)};
  }

  void handle_local(ConnId conn, Frame frame) {
    Serving serving(*this, conn);
    if (auto* c = std::get_if<Control>(&frame)) {
      send_to(conn, Frame{core_->control(*c)});
      return;
    }
    if (std::holds_alternative<PlayerControl>(frame)) {
      send_to(conn, Frame{not_a_player()});
      return;
    }
    switch (frame.index()) {
      case 6:   // Grant
      case 7:   // Deliver
      case 8:   // Error
      case 10:  // ControlReply
      case 12:  // Welcome
        refuse(conn, Error{ErrorCode::kUnknownKind,
                           std::string("a ") + frame_kind_name(frame_kind(frame)) +
                               " frame is coordinator-to-participant only"});
        return;
      case 14:  // PlayerReply
        refuse(conn, Error{ErrorCode::kUnknownKind, kPlayerReplyRefusal});
        return;
      case 11:  // Hello: a local link has no handshake
        return;
      default:
        break;
    }
    if (options_.on_announce) {
      if (const auto* a = std::get_if<Announce>(&frame)) options_.on_announce(*a);
    }
    core_->handle(conn, std::move(frame));
  }

  // A local receive() is about to block: that is the connection's heartbeat, and the core may
  // want to be polled (pace, timeouts) before the server thread would wake by itself.
  void local_waiting(ConnId conn) {
    core_->handle(conn, Heartbeat{});
    std::optional<SimTime> next = core_->poll();
    if (next && *next < server_wake_at_) request_wake();
  }

  // ---- same-host shared memory (hub_->mu held) ------------------------------------------------

  // Serves what the participant wrote into its up ring and writes what waits for room in its
  // down ring. Any thread holding the lock: the peer's reader thread, or the server thread before
  // it ends the connection (what the peer wrote before it died, a Leave, counts first).
  void drain_shm(ConnId conn, ShmPeer& sp, bool poll_after = true) {
    auto it = peers_.find(conn);
    if (it == peers_.end() || it->second.shm.get() != &sp || it->second.dropped) {
      sp.closed.store(true);
      return;
    }
    if (const Status flushed = sp.down->flush(); !flushed.ok()) {
      shm_corrupt(conn, flushed.message());
      return;
    }
    for (int i = 0; i < kMaxBatch; ++i) {
      const shm::Next n = sp.up->next(sp.in);
      if (n == shm::Next::kEmpty) break;
      if (n == shm::Next::kCorrupt) {
        shm_corrupt(conn, sp.up->status().message());
        return;
      }
      handle_conn_bytes(conn, sp.in, /*control_only=*/false, /*extra_parts=*/false,
                        /*via_ring=*/true);
      auto again = peers_.find(conn);
      if (again == peers_.end() || again->second.dropped || again->second.shm.get() != &sp) {
        return;
      }
    }
    sp.down_pending.store(sp.down->pending() > 0);
    if (poll_after) poll_from_reader();
  }

  // After serving frames off the server thread: as for a local link, the core may want to be
  // polled (pace, timeouts) before the server thread would wake by itself.
  void poll_from_reader() {
    if (std::this_thread::get_id() != server_thread_) {
      // As for a local link: the core may want to be polled before the server thread wakes.
      std::optional<SimTime> next = core_->poll();
      if (next && *next < server_wake_at_) request_wake();
    }
  }

  void close_local(ConnId conn) {
    auto it = locals_.find(conn);
    if (it == locals_.end()) return;
    it->second->closed = true;
    it->second->cv.notify_all();
    locals_.erase(it);
    core_->disconnected(conn);
  }

 private:
  // ---- setup ----------------------------------------------------------------------------------

  ZmqSocket make_router() {
    ZmqSocket s = zmqd::open_socket(SocketType::kRouter, "creating a ROUTER socket");
    zmqd::check(s.set_linger(200));
    zmqd::check(s.set_int(ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY"));
    // Bounded queues: a send to a full queue fails (ROUTER_MANDATORY) and drops that peer; a full
    // receive queue stops ZeroMQ reading the peer's connection until the server has caught up.
    zmqd::check(s.set_send_high_water_mark(options_.send_hwm));
    zmqd::check(s.set_receive_high_water_mark(options_.receive_hwm));
    zmqd::set_max_message_size(s, options_.core.max_message_bytes);
    if (!options_.curve_secret_key.empty()) {
      zmqd::check(s.set_int(ZMQ_CURVE_SERVER, 1, "ZMQ_CURVE_SERVER"));
      zmqd::check(s.set_bytes(ZMQ_CURVE_SECRETKEY, options_.curve_secret_key, "CURVE secret key"));
    }
    if (zap_) zmqd::check(s.set_bytes(ZMQ_ZAP_DOMAIN, zap_->name(), "ZMQ_ZAP_DOMAIN"));
    return s;
  }

  std::string bind(ZmqSocket& socket, const std::string& endpoint) {
    std::string ep = zmqd::resolve_endpoint(endpoint, options_.ipc_dir);
    if (const ZmqStatus b = socket.bind(ep); !b.ok()) {
      std::string hint;
      if (b.error() == EADDRINUSE) hint = " (address in use: another coordinator?)";
      if (b.error() == ENOENT) hint = " (does the directory exist?)";
      throw TransportError("cannot bind '" + ep + "': " + zmq_strerror(b.error()) + hint);
    }
    ZmqResult<std::string> bound = socket.last_endpoint();
    // A wildcard tcp bind reports 0.0.0.0: that is where it listens, keep it as the user said.
    return !bound.ok() || bound->empty() ? ep : *bound;
  }

  // Accepted / closed connections (liveness: a peer's process died) and security handshake
  // failures (refused peers) of `socket`.
  void make_monitor(ZmqSocket& socket, const std::string& endpoint) {
    // A process-wide counter: a closed socket's monitor endpoint may stay bound for a moment,
    // and a new server can get the old one's address.
    static std::atomic<uint64_t> next_monitor{0};
    std::string addr = "inproc://fieldproof-monitor-" + std::to_string(next_monitor.fetch_add(1));
    zmqd::check(socket.monitor(addr, ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED |
                                         ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                                         ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                         ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                         ZMQ_EVENT_HANDSHAKE_FAILED_AUTH),
                "zmq_socket_monitor");
    ZmqSocket m = zmqd::open_socket(SocketType::kPair, "creating the monitor socket");
    zmqd::check(m.set_linger(0));
    zmqd::check(m.set_receive_high_water_mark(0));  // never lose a disconnect event
    zmqd::check(m.connect(addr), "connecting the monitor");
    Monitor mon;
    mon.pair = std::move(m);
    mon.socket = &socket;
    mon.endpoint = endpoint;
    monitors_.push_back(std::move(mon));
  }

  void make_zap() {
    if (options_.curve_secret_key.empty()) {
      throw TransportError(
          "authorized keys need CURVE: give the server a secret key (--curve-secret-key FILE)");
    }
    std::set<std::string> allowed;
    for (const std::string& k : *options_.authorized_keys) {
      uint8_t raw[32];
      if (k.size() != 40 || zmq_z85_decode(raw, k.c_str()) == nullptr) {
        throw TransportError("authorized key '" + k + "' is not a 40-character Z85 CURVE key");
      }
      if (k == curve_public_) {
        log("the server's own public key is listed as an authorized key; it is refused anyway");
      }
      allowed.insert(k);
    }
    auto sink = zap_sink_;
    zap_ = std::make_unique<zmqd::ZapDomain>(std::move(allowed), curve_public_,
                                             [sink](const zmqd::ZapRefusal& r) {
                                               MutexLock lock(sink->mutex);
                                               sink->refusals.push_back(r);
                                               if (sink->refusals.size() > 1024)
                                                 sink->refusals.pop_front();
                                             });
  }

  void make_core() {
    // The core's refusals are rate limited per peer like the server's own (its other lines, e.g.
    // a failure, come outside the handling of a peer's frame and pass unchanged).
    LogFn base = options_.core.log ? options_.core.log : options_.log;
    if (base) {
      options_.core.log = [this, base](const std::string& line) {
        if (current_conn_ == 0) {
          base(line);
        } else if (auto l = refusal_log_.admit(refusal_key(current_conn_), wall_(), line)) {
          base(*l);
        }
      };
    }
    core_ = std::make_unique<CoordinatorCore>(
        options_.core, [this](ConnId to, Frame frame) { send_to(to, frame); });
    if (options_.tap) core_->set_tap(options_.tap);
    if (options_.on_grant) core_->set_grant_observer(options_.on_grant);
    core_->set_failure_handler([this](const std::string& participant, std::string reason) {
      log("failure: " + reason);
      if (options_.on_failure) options_.on_failure(participant, reason);
    });
  }

  // ---- cascade: the link to the parent ------------------------------------------------------

  void make_parent() {
    child_name_ = options_.child_name.empty() ? "cascade-" + std::to_string(::getpid())
                                              : options_.child_name;
    std::string ep = zmqd::resolve_endpoint(options_.parent, options_.ipc_dir);
    ZmqSocket s = zmqd::open_socket(SocketType::kDealer, "creating the parent DEALER socket");
    zmqd::check(s.set_linger(200));
    zmqd::check(s.set_send_high_water_mark(0));
    zmqd::check(s.set_receive_high_water_mark(0));
    zmqd::set_max_message_size(s, std::max(options_.core.max_message_bytes, kDefaultMaxFrameBytes));
    zmqd::apply_client_curve(s, options_.parent_connect.curve);
    zmqd::check(s.connect(ep), "connecting to the parent '" + ep + "'");
    parent_ = std::move(s);
    // The handshake goes first: set_upstream() below may already announce.
    send_parent(Frame{Hello{kProtocolVersion, kCoordinatorName}});
    heartbeat_interval_ = options_.parent_connect.heartbeat_interval;
    UpstreamHooks hooks;
    hooks.publish = [this](const Publish& p) { send_parent(Frame{p}); };
    hooks.safe_time = [this](SimTime t) {
      send_parent(Frame{Announce{child_name_, kCascadeThread, Role::kRegulating, t}});
    };
    hooks.subscribe = [this](const std::string& topic) {
      send_parent(Frame{Subscribe{child_name_, kCascadeThread, topic}});
    };
    hooks.unsubscribe = [this](const std::string& topic) {
      send_parent(Frame{Unsubscribe{child_name_, kCascadeThread, topic}});
    };
    core_->set_upstream(std::move(hooks));
    send_parent(Frame{Announce{child_name_, kCascadeThread, Role::kRegulating,
                               core_->min_safe_time()}});
  }

  // A local participant's name must exist at the parent so that its forwarded publishes keep
  // their publisher name (the total order's second key): the child registers it there on its
  // connection with a thread that never holds time (the child's own thread carries the local
  // minimum), and removes it when the participant leaves.
  void mirror_registration(const Frame& frame) {
    if (const auto* a = std::get_if<Announce>(&frame)) {
      if (a->participant == child_name_) return;
      if (mirrored_.insert(a->participant).second) {
        send_parent(Frame{Announce{a->participant, kMirrorThread, a->role, SimTime::infinite()}});
      }
    } else if (const auto* l = std::get_if<Leave>(&frame)) {
      if (l->thread.empty() && mirrored_.erase(l->participant) > 0) {
        send_parent(Frame{Leave{l->participant, ""}});
      }
    }
  }

  void send_parent(const Frame& frame) {
    if (!parent_.valid()) return;
    encode_frame_into(frame, parent_out_);
    if (const ZmqStatus s = parent_.send(parent_out_, {.dont_wait = true}); !s.ok()) {
      log(std::string("send to the parent failed: ") + zmq_strerror(s.error()));
    }
    parent_heartbeat_due_ = wall_() + heartbeat_interval_;
  }

  void parent_heartbeat() {
    if (heartbeat_interval_ <= Duration::zero() || heartbeat_interval_.is_infinite()) {
      parent_heartbeat_due_ = SimTime::infinite();
      return;
    }
    if (wall_() >= parent_heartbeat_due_) send_parent(Frame{Heartbeat{child_name_}});
  }

  void drain_parent() {
    ZmqMessage msg;
    for (int i = 0; i < kMaxBatch; ++i) {
      if (!parent_.recv(msg, /*dont_wait=*/true).ok()) break;
      std::string_view bytes = msg.view();
      DecodeResult r = decode_frame(bytes);
      if (!r) {
        log("undecodable frame from the parent: " + r.error().reason);
        if (r.error().code == ErrorCode::kVersion) parent_version_mismatch(*wire_version(bytes));
        continue;
      }
      Frame f = std::move(r).frame();
      if (auto* w = std::get_if<Welcome>(&f)) {
        if (w->protocol_version != kProtocolVersion) parent_version_mismatch(w->protocol_version);
      } else if (auto* g = std::get_if<Grant>(&f)) {
        core_->upstream_grant(g->time);
      } else if (auto* d = std::get_if<Deliver>(&f)) {
        core_->upstream_deliver(std::move(d->message));
      } else if (auto* e = std::get_if<Error>(&f)) {
        log("the parent refused a frame: " + e->reason);
        if (e->code == ErrorCode::kTimeout || e->code == ErrorCode::kShutdown ||
            e->code == ErrorCode::kVersion || e->code == ErrorCode::kNoHello) {
          core_->shutdown("the parent coordinator ended the run: " + e->reason);
        }
      }
    }
  }

  void parent_version_mismatch(uint32_t version) {
    core_->shutdown("the parent coordinator speaks protocol version " + std::to_string(version) +
                    "; this coordinator speaks version " + std::to_string(kProtocolVersion));
  }

  void close_sockets() {
    // Stop the monitors first: the events of the closing sockets would go to monitor sockets
    // that nobody reads any more.
    for (const Monitor& m : monitors_) (void)m.socket->monitor("", 0);  // best effort
    monitors_.clear();
    router_.close();
    control_.close();
    parent_.close();
  }

  // ---- the loop -------------------------------------------------------------------------------

  void wake() {
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  }

  void run() {
    std::vector<ZmqPollItem> items;
    items.push_back({&router_, -1, ZmqPoll::kIn, 0});
    if (control_.valid()) items.push_back({&control_, -1, ZmqPoll::kIn, 0});
    for (Monitor& m : monitors_) items.push_back({&m.pair, -1, ZmqPoll::kIn, 0});
    if (parent_.valid()) items.push_back({&parent_, -1, ZmqPoll::kIn, 0});
    items.push_back({nullptr, wake_fd_, ZmqPoll::kIn, 0});

    MutexLock lock(hub_->mu);
    server_thread_ = std::this_thread::get_id();
    std::optional<SimTime> next = core_->poll();
    while (!stopping_.load(std::memory_order_relaxed)) {
      long timeout_ms = 1000;  // also bounds how late a parent heartbeat can be
      if (next) {
        Duration left = *next - wall_();
        int64_t ms = left <= Duration::zero() ? 0 : (left.ns() + 999'999) / 1'000'000;
        if (ms < timeout_ms) timeout_ms = static_cast<long>(ms);
      }
      if (parent_.valid()) {
        Duration left = parent_heartbeat_due_ - wall_();
        int64_t ms = left <= Duration::zero() ? 0 : (left.ns() + 999'999) / 1'000'000;
        if (ms < timeout_ms) timeout_ms = static_cast<long>(ms);
      }
      server_wake_at_ = wall_() + milliseconds(timeout_ms);
      lock.unlock();
      const ZmqResult<int> rc = poll_sockets(items, timeout_ms);
      lock.lock();
      server_wake_at_ = SimTime::zero();  // awake: a local thread never needs to wake it
      flush_remote();
      if (!rc.ok() && !rc.status().interrupted()) {
        log(std::string("zmq_poll failed: ") + zmq_strerror(rc.status().error()));
        break;
      }
      if (rc.ok() && *rc > 0) {
        // zmq_poll reports ZeroMQ sockets level-triggered (messages pending), so draining only
        // the ready ones loses nothing and saves a syscall per idle socket.
        size_t k = 0;
        if (items[k++].revents & ZmqPoll::kIn) drain_router(router_, /*control_only=*/false);
        if (control_.valid() && (items[k++].revents & ZmqPoll::kIn)) {
          drain_router(control_, /*control_only=*/true);
        }
        for (Monitor& m : monitors_) {
          if (items[k++].revents & ZmqPoll::kIn) drain_monitor(m);
        }
        if (parent_.valid() && (items[k++].revents & ZmqPoll::kIn)) drain_parent();
        if (items.back().revents & ZmqPoll::kIn) {
          drain_wake();
          run_tasks();
        }
      }
      if (!closed_conns_.empty()) {
        // What a peer sent before its connection closed (a Leave) is queued before the event
        // that said so: take it first, so an orderly exit is not mistaken for a crash.
        while (drain_router(router_, /*control_only=*/false) == kMaxBatch) {
        }
        for (ConnId c : closed_conns_) pending_disconnects_.push_back(c);
        closed_conns_.clear();
      }
      flush_disconnects();
      next = core_->poll();
      flush_disconnects();
      if (parent_.valid()) parent_heartbeat();
      flush_refusal_counts();
    }
    shutdown();
    lock.unlock();  // the reader thread takes the lock to see that the server is shut
    if (shm_thread_.joinable()) shm_thread_.join();
  }

  // Once a second: the counts of refusal lines suppressed for a whole interval.
  void flush_refusal_counts() {
    const SimTime now = wall_();
    if (now < next_log_flush_) return;
    next_log_flush_ = now + seconds(1);
    for (const std::string& line : refusal_log_.flush(now)) log(line);
  }

  void drain_wake() {
    uint64_t v = 0;
    [[maybe_unused]] auto n = ::read(wake_fd_, &v, sizeof v);
    wake_pending_ = false;
  }

  void run_tasks() {
    std::deque<std::function<void()>> tasks;
    {
      MutexLock lock(tasks_mutex_);
      tasks.swap(tasks_);
    }
    for (auto& t : tasks) t();
  }

  // Handles up to kMaxBatch frames; returns how many it found.
  int drain_router(ZmqSocket& socket, bool control_only) {
    ZmqMessage id;
    ZmqMessage body;
    int i = 0;
    for (; i < kMaxBatch; ++i) {
      if (!socket.recv(id, /*dont_wait=*/true).ok()) break;
      std::string routing(id.view());
      if (!id.more()) continue;  // cannot happen with DEALER peers
      if (!socket.recv(body).ok()) break;
      // The connection's descriptor comes with the body (the routing id frame may lack it). It
      // is the descriptor when the frame was read from the connection: a frame queued before its
      // connection closed carries a number the next connection may have now (conn_for).
      const int fd = body.source_fd();
      // A peer may send extra parts; only the first body part is the frame.
      bool extra = body.more();
      handle_bytes(socket, routing, fd, body.view(), control_only, extra);
      while (extra) {
        // The rest of the message is already queued: a blocking read returns at once.
        if (!socket.recv(id).ok()) break;
        extra = id.more();
      }
    }
    return i;
  }

  // Whether the ROUTER attached the connection with routing id `a` before the one with `b`.
  // Its own routing ids are 5 bytes, a zero then a 32-bit counter it increments for each
  // connection it attaches (from a random start: compared modulo 2^32). Ids a peer chose
  // itself carry no order: then `a` is taken as the newer (it is the frame being read now).
  static bool attached_before(std::string_view a, std::string_view b) {
    auto counter = [](std::string_view id) -> std::optional<uint32_t> {
      if (id.size() != 5 || id[0] != '\0') return std::nullopt;
      uint32_t v = 0;
      for (size_t k = 1; k < 5; ++k) v = (v << 8) | static_cast<uint8_t>(id[k]);
      return v;
    };
    const auto ca = counter(a);
    const auto cb = counter(b);
    if (!ca || !cb || *ca == *cb) return false;
    return static_cast<int32_t>(*cb - *ca) > 0;
  }

  ConnId conn_for(ZmqSocket& socket, const std::string& routing, int fd) {
    auto& ids = &socket == &router_ ? router_ids_ : control_ids_;
    auto it = ids.find(routing);
    if (it != ids.end()) return it->second;
    // A new connection may have the descriptor of one that closed a moment ago, whose close
    // event can still be waiting on the monitor (events and data arrive on different sockets).
    // libzmq reports a close before the accept that reuses the descriptor, and that accept
    // before the new connection's first frame: taking the monitor's events now means a close
    // is never applied to the connection that came after it.
    for (Monitor& m : monitors_) {
      while (drain_monitor(m) == kMonitorBatch) {
      }
    }
    ConnId c = next_conn_++;
    ids.emplace(routing, c);
    Peer peer;
    peer.socket = &socket;
    peer.routing_id = routing;
    peer.fd = fd;
    if (fd >= 0) peer.host = peer_address(fd).host;
    if (peer.host.empty()) peer.host = "conn " + std::to_string(c);
    peers_.emplace(c, std::move(peer));
    if (fd >= 0) {
      auto old = fd_conn_.find(fd);
      if (old != fd_conn_.end()) {
        if (attached_before(routing, peers_.at(old->second).routing_id)) {
          // This frame's connection is the older of the two: its frames were queued before it
          // closed (never read before, so unknown here) and its descriptor now belongs to the
          // newer one. It is closed; what it sent is still served, then it ends.
          peers_.at(c).fd = -1;
          pending_disconnects_.push_back(c);
          return c;
        }
        // The descriptor was reused, so the old connection is closed. Its close event, if it
        // had one, came before the accept that reused the descriptor and was taken above.
        pending_disconnects_.push_back(old->second);
      }
      fd_conn_[fd] = c;
    }
    return c;
  }

  // Marks `conn` as the peer being served while its frame is handled (core log lines are then
  // rate limited as that peer's).
  struct Serving {
    Impl& impl;
    Serving(Impl& i, ConnId c) : impl(i) {
      impl.current_conn_ = c;
      impl.refused_current_ = false;
    }
    ~Serving() { impl.current_conn_ = 0; }
  };

  // The key of a connection's refusal lines: its host (a flood from one host that reconnects
  // stays one peer), or the connection when the host is unknown.
  std::string refusal_key(ConnId conn) const {
    auto it = peers_.find(conn);
    return "frames from " + (it == peers_.end() ? "conn " + std::to_string(conn) : it->second.host);
  }

  // One frame of a peer: discarded when the peer was dropped; otherwise served, and the peer
  // dropped once max_refusals_in_row frames in a row were refused (an Error sent back).
  void handle_bytes(ZmqSocket& socket, const std::string& routing, int fd, std::string_view bytes,
                    bool control_only, bool extra_parts) {
    handle_conn_bytes(conn_for(socket, routing, fd), bytes, control_only, extra_parts,
                      /*via_ring=*/false);
  }

  void handle_conn_bytes(ConnId conn, std::string_view bytes, bool control_only,
                         bool extra_parts, bool via_ring) {
    if (peers_.at(conn).dropped) {
      discarded_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    {
      Serving serving(*this, conn);
      serve(conn, bytes, control_only, extra_parts, via_ring);
    }
    auto it = peers_.find(conn);
    if (it == peers_.end() || it->second.dropped) return;
    if (!refused_current_) {
      it->second.refusals_in_row = 0;
    } else if (++it->second.refusals_in_row >= options_.max_refusals_in_row) {
      drop(conn, std::to_string(it->second.refusals_in_row) + " frames in a row were refused");
    }
  }

  // Drops a flooding peer (zmq_server.hpp): no more replies, its queued frames discarded, its
  // connection shut down (ZeroMQ then closes it and the close event ends it in the core).
  void drop(ConnId conn, const std::string& why) {
    auto it = peers_.find(conn);
    if (it == peers_.end() || it->second.dropped) return;
    Peer& p = it->second;
    p.dropped = true;
    dropped_.fetch_add(1);
    if (p.shm) p.shm->closed.store(true);
    bool shut = false;
    if (p.fd >= 0) {
      // The connection may have closed and its descriptor gone to a new one still in its
      // handshake (no frame from it yet, so unknown here): shutting that down would refuse a
      // healthy peer. libzmq reports the close before the accept that reuses the descriptor, so
      // with the monitors' events taken first a reused descriptor is no longer this connection's.
      for (Monitor& m : monitors_) {
        while (drain_monitor(m) == kMonitorBatch) {
        }
      }
      auto f = fd_conn_.find(p.fd);
      if (f != fd_conn_.end() && f->second == conn) shut = ::shutdown(p.fd, SHUT_RD) == 0;
    }
    const std::string line = "dropped connection " + std::to_string(conn) + " from " + p.host +
                             ": " + why + "; " +
                             (shut ? "it is disconnected" : "it cannot be disconnected") +
                             " and what it still sends is discarded unanswered";
    if (auto l = refusal_log_.admit("connections dropped from " + p.host, wall_(), line)) log(*l);
  }

  void serve(ConnId conn, std::string_view bytes, bool control_only, bool extra_parts,
             bool via_ring) {
    if (bytes.size() > options_.core.max_message_bytes) {
      refuse(conn, Error{ErrorCode::kOversized,
                         "frame of " + std::to_string(bytes.size()) +
                             " bytes exceeds max_message_bytes " +
                             std::to_string(options_.core.max_message_bytes)});
      return;
    }
    DecodeResult r = decode_frame(bytes, options_.core.max_message_bytes);
    if (!r) {
      if (r.error().code == ErrorCode::kVersion) {
        refuse_version(conn, *wire_version(bytes));
        return;
      }
      refuse(conn, r.error());
      return;
    }
    if (extra_parts) {
      if (auto l = refusal_log_.admit(refusal_key(conn), wall_(),
                                      "ignoring extra message parts after a " + kind_of(bytes) +
                                          " frame from connection " + std::to_string(conn))) {
        log(*l);
      }
    }
    Frame frame = std::move(r).frame();
    if (auto* h = std::get_if<Hello>(&frame)) {
      on_hello(conn, *h, via_ring);
      return;
    }
    if (auto* c = std::get_if<Control>(&frame)) {
      send_to(conn, Frame{core_->control(*c)});
      return;
    }
    if (std::holds_alternative<PlayerControl>(frame)) {
      send_to(conn, Frame{not_a_player()});
      return;
    }
    if (control_only) {
      refuse(conn, Error{ErrorCode::kMalformed, std::string("the control endpoint takes only "
                                                            "control frames, got ") +
                                                    kind_of(bytes)});
      return;
    }
    switch (frame.index()) {
      case 6:   // Grant
      case 7:   // Deliver
      case 8:   // Error
      case 10:  // ControlReply
      case 12:  // Welcome
        refuse(conn, Error{ErrorCode::kUnknownKind, std::string("a ") + kind_of(bytes) +
                                                      " frame is coordinator-to-participant only"});
        return;
      case 14:  // PlayerReply
        refuse(conn, Error{ErrorCode::kUnknownKind, kPlayerReplyRefusal});
        return;
      default:
        break;
    }
    if (!hello_accepted(conn, bytes)) return;
    if (options_.on_announce) {
      if (const auto* a = std::get_if<Announce>(&frame)) options_.on_announce(*a);
    }
    if (parent_.valid() &&
        (std::holds_alternative<Announce>(frame) || std::holds_alternative<Leave>(frame))) {
      // The core first (its safe-time hook announces the new local minimum to the parent), then
      // the mirror: when the parent sees a participant's name, the child's announcement already
      // accounts for that participant. Its publishes come in later frames, after the mirror.
      Frame copy = frame;
      core_->handle(conn, std::move(frame));
      mirror_registration(copy);
      return;
    }
    core_->handle(conn, std::move(frame));
  }

  // ---- the handshake (docs/protocol.md, 5.1) ------------------------------------------------

  void on_hello(ConnId conn, const Hello& hello, bool via_ring) {
    if (hello.protocol_version != kProtocolVersion) {
      refuse_version(conn, hello.protocol_version);
      return;
    }
    Peer& peer = peers_.at(conn);
    peer.hello = HelloState::kAccepted;
    Welcome w{kProtocolVersion, kCoordinatorName,
              static_cast<uint64_t>(options_.core.max_message_bytes)};
    if (!via_ring && peer.shm_offered && ends_with(hello.client, zmqd::kShmSwitch)) {
      // The switch (docs/protocol.md 5.1 item 5): the participant mapped the segment and sent
      // this Hello as its last frame on the socket; this Welcome is our last one. From here on
      // everything to it goes into its down ring and its up ring is read: every socket frame it
      // sent before has been served (frames of one connection keep their order).
      send_to(conn, Frame{w});
      peer.shm = std::move(peer.shm_offered);
      peer.shm_offered.reset();
      shm_connections_.fetch_add(1);
      shm_active_.emplace_back(conn, peer.shm);
      if (!shm_thread_.joinable()) shm_thread_ = std::thread([this] { shm_loop(); });
      if (options_.on_shm_switch) options_.on_shm_switch();
      return;
    }
    if (!via_ring && !peer.shm && ends_with(hello.client, zmqd::kShmOffer) &&
        peer.socket == &router_) {
      if (!peer.shm_offered) peer.shm_offered = open_shm(conn, peer);
      if (peer.shm_offered) {
        w.coordinator += std::string(zmqd::kShmAccept) + peer.shm_offered->seg->proc_path() +
                         ":" + peer.shm_offered->seg->token_hex() + ";" +
                         bell_seg_->proc_path() + ":" + bell_seg_->token_hex();
      }
    }
    send_to(conn, Frame{w});
  }

  static bool ends_with(const std::string& text, std::string_view suffix) {
    return text.size() >= suffix.size() &&
           std::string_view(text).substr(text.size() - suffix.size()) == suffix;
  }

  // The reader of every same-host connection: serves what their up rings hold, then sleeps on
  // the doorbell (a short slice while frames wait for room in a down ring). One thread for all:
  // a participant's write wakes it only when it sleeps, so 64 announcements in a burst cost a few
  // wake-ups, not 64.
  void shm_loop() {
    shm::RingControl& bell = bell_seg_->up();
    MutexLock lock(hub_->mu);
    while (!hub_->shut) {
      bool pending = false;
      if (drain_all_shm(&pending)) continue;  // found frames: look again before sleeping
      const uint32_t seen = bell.seq.load(std::memory_order_seq_cst);
      bell.sleeping.store(1, std::memory_order_seq_cst);
      if (drain_all_shm(&pending)) {  // published before the flag was seen
        bell.sleeping.store(0, std::memory_order_relaxed);
        continue;
      }
      lock.unlock();
      shm::bell_wait(bell, seen, pending ? milliseconds(1) : milliseconds(200));
      lock.lock();
    }
  }

  // hub_->mu held: serves every same-host connection with something in its up ring (or waiting
  // for room in its down ring). Returns whether any up ring had frames; *pending: frames still
  // wait for room somewhere.
  bool drain_all_shm(bool* pending) {
    bool found = false;
    // By index: serving a frame never adds or removes entries (only the server thread's
    // flush_disconnects and the switch do, under this lock).
    for (size_t i = 0; i < shm_active_.size(); ++i) {
      ShmPeer& sp = *shm_active_[i].second;
      if (sp.closed.load()) continue;
      const bool in = sp.up->published();
      if (!in && !sp.down_pending.load()) continue;
      found = found || in;
      drain_shm(shm_active_[i].first, sp, /*poll_after=*/false);
      if (sp.down_pending.load()) *pending = true;
    }
    if (found) poll_from_reader();  // once for all: the core's poll() looks at every thread
    return found;
  }

  // A segment for `peer` when the same-host transport may serve it: allowed, a root coordinator
  // (a child's core calls the parent socket, which only the server thread may use) and an ipc
  // connection (a Unix socket: the same kernel).
  std::shared_ptr<ShmPeer> open_shm(ConnId conn, const Peer& peer) {
    if (!shm_allowed_ || parent_.valid() || peer.fd < 0) return nullptr;
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(peer.fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 ||
        ss.ss_family != AF_UNIX) {
      return nullptr;
    }
    std::string why;
    auto sp = std::make_shared<ShmPeer>();
    // The doorbell: the smallest segment, of which only the first control block is used.
    const auto take = [&why](Result<std::unique_ptr<shm::Segment>> created) {
      if (!created.ok()) why = created.status().message();
      return created.ok() ? std::move(created).value() : nullptr;
    };
    if (!bell_seg_) bell_seg_ = take(shm::Segment::create(shm::kMinRingBytes));
    if (bell_seg_) sp->seg = take(shm::Segment::create(options_.shm_ring_bytes));
    if (!sp->seg) {
      if (auto l = refusal_log_.admit("shared memory", wall_(),
                                      "connection " + std::to_string(conn) +
                                          " stays on ZeroMQ: no shared memory: " + why)) {
        log(*l);
      }
      return nullptr;
    }
    const uint32_t rb = sp->seg->ring_bytes();
    sp->up = std::make_unique<shm::Consumer>(sp->seg->up(), sp->seg->up_data(), rb,
                                             options_.core.max_message_bytes +
                                                 zmqd::kMaxMessageSlack);
    sp->down = std::make_unique<shm::Producer>(sp->seg->down(), sp->seg->down_data(), rb);
    return sp;
  }

  // Ends the same-host part of a connection (the reader forgets it).
  void close_shm(Peer& peer) {
    if (!peer.shm) return;
    peer.shm->closed.store(true);
    std::erase_if(shm_active_, [&](const auto& e) { return e.second == peer.shm; });
    peer.shm.reset();
  }

  // A ring holding something impossible: the peer is dropped as a flooder would be (its
  // connection shut down; a regulating participant then fails the run, named).
  void shm_corrupt(ConnId conn, const std::string& why) {
    auto it = peers_.find(conn);
    if (it == peers_.end()) return;
    if (it->second.shm) it->second.shm->closed.store(true);
    drop(conn, "its shared-memory ring is corrupt (" + why + ")");
  }

  // hub_->mu held, any thread: a frame into the peer's down ring.
  void send_shm(ConnId conn, Peer& peer, const Frame& frame) {
    ShmPeer& sp = *peer.shm;
    if (const Status pushed = sp.down->push(encode_frame(frame)); !pushed.ok()) {
      shm_corrupt(conn, pushed.message());
      return;
    }
    if (sp.down->pending() > 0) {
      sp.down_pending.store(true);
      if (sp.down->pending() > static_cast<size_t>(options_.send_hwm)) {
        drop(conn, "its send queue is full (" + std::to_string(options_.send_hwm) +
                       " frames it has not read)");
      }
    }
  }

  void refuse_version(ConnId conn, uint32_t version) {
    Peer& peer = peers_.at(conn);
    peer.hello = HelloState::kRefused;
    peer.refused_version = version;
    refuse(conn, Error{ErrorCode::kVersion, version_refusal(version)});
  }

  // A participant frame passes only on a connection whose Hello was accepted.
  bool hello_accepted(ConnId conn, std::string_view bytes) {
    const Peer& peer = peers_.at(conn);
    if (peer.hello == HelloState::kAccepted) return true;
    if (peer.hello == HelloState::kRefused) {
      refuse(conn, Error{ErrorCode::kVersion, version_refusal(peer.refused_version)});
    } else {
      refuse(conn, Error{ErrorCode::kNoHello, "a " + kind_of(bytes) +
                                                  " frame before Hello: a participant's first "
                                                  "frame is Hello{protocol_version " +
                                                  std::to_string(kProtocolVersion) +
                                                  ", client} (docs/protocol.md)"});
    }
    return false;
  }

  void refuse(ConnId conn, Error error) {
    bad_frames_.fetch_add(1);
    if (auto l = refusal_log_.admit(
            refusal_key(conn), wall_(),
            "refused a frame from connection " + std::to_string(conn) + ": " + error.reason)) {
      log(*l);
    }
    send_to(conn, Frame{std::move(error)});
  }

  // hub_->mu held (by the server thread or a local link's thread).
  void send_to(ConnId conn, const Frame& frame) {
    if (auto l = locals_.find(conn); l != locals_.end()) {
      if (!l->second->closed) {
        l->second->frames.push(frame);
        l->second->cv.notify_one();
      }
      return;
    }
    auto peer = peers_.find(conn);
    if (peer == peers_.end() || peer->second.dropped) return;
    if (conn == current_conn_ && std::holds_alternative<Error>(frame)) refused_current_ = true;
    if (peer->second.shm) {
      send_shm(conn, peer->second, frame);
      return;
    }
    if (std::this_thread::get_id() != server_thread_) {
      // A local link's thread runs the core: the socket is the server thread's. A Grant that
      // follows another Grant to the same peer still waiting here replaces it (grants only
      // increase, and nothing came between them): a peer that is slower than the local
      // participants is not woken once per grant it would only skip.
      const bool grant = std::holds_alternative<Grant>(frame);
      auto last = remote_last_.find(conn);
      if (grant && last != remote_last_.end() && remote_out_[last->second].grant) {
        encode_frame_into(frame, remote_out_[last->second].bytes);
        return;
      }
      remote_last_[conn] = remote_out_.size();
      remote_out_.push_back(RemoteFrame{conn, grant, encode_frame(frame)});
      request_wake();
      return;
    }
    flush_remote();  // what local threads queued goes first: the order to each peer is kept
    encode_frame_into(frame, out_);
    send_bytes_to(conn, out_);
  }

  void send_bytes_to(ConnId conn, const std::string& bytes) {
    auto it = peers_.find(conn);
    if (it == peers_.end()) return;
    if (it->second.dropped) return;
    const Peer& p = it->second;
    ZmqStatus s = p.socket->send(p.routing_id, {.more = true, .dont_wait = true});
    if (s.ok()) s = p.socket->send(bytes, {.dont_wait = true});
    if (!s.ok()) {
      if (s.error() == EHOSTUNREACH) {
        pending_disconnects_.push_back(conn);
      } else if (s.would_block()) {
        drop(conn, "its send queue is full (" + std::to_string(options_.send_hwm) +
                       " frames it has not read)");
      } else if (auto l = refusal_log_.admit(refusal_key(conn), wall_(),
                                             "send to connection " + std::to_string(conn) +
                                                 " failed: " + zmq_strerror(s.error()))) {
        log(*l);
      }
    }
  }

  // Server thread, hub_->mu held: sends what local threads queued for socket peers.
  void flush_remote() {
    if (remote_out_.empty()) return;
    std::vector<RemoteFrame> out;
    out.swap(remote_out_);
    remote_last_.clear();
    for (const RemoteFrame& f : out) send_bytes_to(f.conn, f.bytes);
    out.clear();
    if (remote_out_.empty()) remote_out_.swap(out);  // keep the capacity
  }

  // hub_->mu held: wakes the server thread once until it has read the eventfd.
  void request_wake() {
    if (wake_pending_) return;
    wake_pending_ = true;
    wake();
  }

  void flush_disconnects() {
    while (!pending_disconnects_.empty()) {
      ConnId c = pending_disconnects_.front();
      pending_disconnects_.pop_front();
      auto it = peers_.find(c);
      if (it == peers_.end()) continue;
      if (it->second.shm) {
        // What the peer wrote before its connection closed (a Leave) is taken first.
        std::shared_ptr<ShmPeer> sp = it->second.shm;
        drain_shm(c, *sp);
        it = peers_.find(c);
        if (it == peers_.end()) continue;
        close_shm(it->second);
      }
      auto& ids = it->second.socket == &router_ ? router_ids_ : control_ids_;
      ids.erase(it->second.routing_id);
      if (auto f = fd_conn_.find(it->second.fd); f != fd_conn_.end() && f->second == c) {
        fd_conn_.erase(f);
      }
      bool participant_conn = it->second.socket == &router_;
      peers_.erase(it);
      // No line of its own: every orderly exit closes a connection too (after its Leave). The
      // core logs what matters: the failure of a regulating participant, a dropped follower.
      if (participant_conn) core_->connection_lost(c);
    }
  }

  // Takes up to kMonitorBatch events; returns how many it took.
  int drain_monitor(Monitor& m) {
    int i = 0;
    for (; i < kMonitorBatch; ++i) {
      // The endpoint part (the local one for accepted connections) is not needed.
      ZmqResult<ZmqMonitorEvent> ev = m.pair.recv_monitor_event(/*dont_wait=*/true);
      if (!ev.ok()) {
        if (ev.status().error() == EPROTO) continue;  // malformed (never from libzmq): skipped
        break;
      }
      const int fd = static_cast<int>(ev->value);
      const uint16_t event = ev->event;
      switch (event) {
        case ZMQ_EVENT_ACCEPTED:
          m.handshaking.emplace_back(fd, peer_address(fd));
          if (m.handshaking.size() > 256) m.handshaking.pop_front();
          break;
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
          if (!m.handshaking.empty()) m.handshaking.pop_front();
          break;
        case ZMQ_EVENT_DISCONNECTED:
          connection_closed(m, fd);
          break;
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
          handshake_failed(m, event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
          break;
        default:
          break;
      }
    }
    return i;
  }

  void connection_closed(Monitor& m, int fd) {
    for (auto it = m.handshaking.begin(); it != m.handshaking.end(); ++it) {
      if (it->first == fd) {
        m.handshaking.erase(it);
        break;
      }
    }
    auto it = fd_conn_.find(fd);
    if (it == fd_conn_.end()) return;  // a peer that never sent a frame (refused, or idle)
    closed_conns_.push_back(it->second);
    fd_conn_.erase(it);
  }

  void handshake_failed(Monitor& m, bool by_zap) {
    PeerAddress addr;
    if (!m.handshaking.empty()) {
      addr = m.handshaking.front().second;
      m.handshaking.pop_front();
    }
    std::string key = "none";
    std::string why = "CURVE handshake failed (a client needs CURVE and the server's public key)";
    if (by_zap) {
      MutexLock lock(zap_sink_->mutex);
      if (!zap_sink_->refusals.empty()) {
        const zmqd::ZapRefusal& z = zap_sink_->refusals.front();
        key = z.key;
        why = z.reason;
        if (addr.host.empty() && !z.address.empty()) {
          addr.host = z.address;  // ZAP knows the peer's IP (not its port)
          addr.text = z.address;
        }
        zap_sink_->refusals.pop_front();
      } else {
        why = "refused by the authorized keys";
      }
    }
    refused_.fetch_add(1);
    const std::string line =
        "refused a peer " + addr.text + " on " + m.endpoint + " (key " + key + "): " + why;
    // A peer is its key; keyless peers are one per endpoint: a refused connection may be closed
    // before its accept event is read, so their address is not always known.
    const std::string peer =
        key != "none" ? "peers refused with key " + key : "keyless peers refused on " + m.endpoint;
    if (auto l = refusal_log_.admit(peer, wall_(), line)) log(*l);
    if (options_.on_refused) options_.on_refused(line);
  }

  // Server thread, hub_->mu held.
  void shutdown() FIELDPROOF_REQUIRES(hub_->mu) {
    flush_remote();
    for (auto& [conn, peer] : peers_) {
      if (peer.socket != &router_) continue;
      send_to(conn, Frame{Error{ErrorCode::kShutdown, "the coordinator is shutting down"}});
    }
    for (auto& [conn, q] : locals_) {
      q->frames.push(Frame{Error{ErrorCode::kShutdown, "the coordinator is shutting down"}});
      q->closed = true;
      q->cv.notify_all();
    }
    locals_.clear();
    for (auto& [conn, peer] : peers_) {
      if (peer.shm) {
        // The shutdown Error, if it waited for room; a corrupt ring is closed all the same.
        static_cast<void>(peer.shm->down->flush());
        close_shm(peer);
      }
    }
    hub_->shut = true;
    if (bell_seg_) shm::bell_ring(bell_seg_->up());  // the reader sees `shut` and ends
    if (parent_.valid() && !child_name_.empty()) send_parent(Frame{Leave{child_name_, ""}});
    {
      MutexLock lock(tasks_mutex_);
      stopped_ = true;
    }
    run_tasks();  // answer anyone who queued a request meanwhile
    core_.reset();
    close_sockets();
  }

  void log(const std::string& line) {
    if (options_.log) options_.log(line);
  }

  ServerOptions options_;
  WallNow wall_;
  std::unique_ptr<CoordinatorCore> core_;
  // Closed by close_sockets() (each also closes itself when the server is destroyed). The peers
  // and the monitors point at router_ and control_, which never move.
  ZmqSocket router_;
  ZmqSocket control_;
  std::vector<Monitor> monitors_;
  ZmqSocket parent_;
  std::shared_ptr<ZapSink> zap_sink_ = std::make_shared<ZapSink>();
  std::unique_ptr<zmqd::ZapDomain> zap_;
  zmqd::RateLimitedLog refusal_log_{options_.refusal_log_interval};
  ConnId current_conn_ = 0;  // the peer whose frame is being handled (0: none)
  bool refused_current_ = false;  // an Error went to current_conn_ while its frame was handled
  SimTime next_log_flush_ = SimTime::zero();
  // Connections by file descriptor (liveness: a close event names the descriptor), descriptors
  // whose next close event is about a connection already handled, and connections found closed.
  std::unordered_map<int, ConnId> fd_conn_;
  std::vector<ConnId> closed_conns_;
  std::vector<std::string> endpoints_;
  std::string control_endpoint_;
  std::string curve_public_;

  std::unordered_map<std::string, ConnId> router_ids_;
  std::unordered_map<std::string, ConnId> control_ids_;
  std::unordered_map<ConnId, Peer> peers_;
  ConnId next_conn_ = 1;
  std::deque<ConnId> pending_disconnects_;
  std::string out_;

  // cascade state
  std::string child_name_;
  Duration heartbeat_interval_ = Duration::infinite();
  SimTime parent_heartbeat_due_ = SimTime::infinite();
  std::string parent_out_;
  std::unordered_set<std::string> mirrored_;

  // Local links (guarded by hub_->mu, like everything the core touches).
  std::shared_ptr<LocalHub> hub_ = std::make_shared<LocalHub>();
  std::unordered_map<ConnId, std::shared_ptr<LocalQueue>> locals_;
  struct RemoteFrame {
    ConnId conn;
    bool grant;
    std::string bytes;  // encoded
  };
  std::vector<RemoteFrame> remote_out_;           // for socket peers, in order
  std::unordered_map<ConnId, size_t> remote_last_;  // each peer's last entry in remote_out_
  bool wake_pending_ = false;        // the eventfd was written and not read yet
  SimTime server_wake_at_;           // when the waiting server thread wakes by itself (zero: awake)
  std::thread::id server_thread_;

  // Same-host shared memory.
  bool shm_allowed_ = true;
  std::unique_ptr<shm::Segment> bell_seg_;  // the doorbell, created with the first offer
  std::vector<std::pair<ConnId, std::shared_ptr<ShmPeer>>> shm_active_;  // switched connections
  std::thread shm_thread_;  // their reader (shm_loop), started with the first switch

  int wake_fd_ = -1;
  Mutex tasks_mutex_;
  std::deque<std::function<void()>> tasks_ FIELDPROOF_GUARDED_BY(tasks_mutex_);
  bool stopped_ FIELDPROOF_GUARDED_BY(tasks_mutex_) = false;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> bad_frames_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> discarded_{0};
  std::atomic<uint64_t> shm_connections_{0};
  std::thread thread_;
};

// A participant of the server's own process: frames pass as values and the core runs on the
// caller's thread under the hub's lock (see the top of this file).
class CoordinatorServer::LocalLink final : public Link {
 public:
  LocalLink(std::shared_ptr<LocalHub> hub, ConnId id, std::shared_ptr<LocalQueue> q)
      : hub_(std::move(hub)), id_(id), q_(std::move(q)) {}
  ~LocalLink() override { close(); }

  void send(Frame frame) override {
    MutexLock lock(hub_->mu);
    if (q_->closed || hub_->shut) return;
    hub_->impl->handle_local(id_, std::move(frame));
  }

  std::optional<Frame> receive(Duration timeout) override {
    MutexLock lock(hub_->mu);
    if (!q_->frames.empty()) return q_->frames.pop();
    if (q_->closed || timeout <= Duration::zero()) return std::nullopt;
    using Clock = std::chrono::steady_clock;
    const Clock::time_point until = timeout.is_infinite()
                                        ? Clock::time_point::max()
                                        : Clock::now() + std::chrono::nanoseconds(timeout.ns());
    const auto ready = [&] { return !q_->frames.empty() || q_->closed; };
    for (;;) {
      // Waiting is this connection's heartbeat (renewed every slice, so a participant idle for
      // longer than ack_timeout is not taken for a silent one).
      if (!hub_->shut) hub_->impl->local_waiting(id_);
      if (ready()) break;
      const Clock::time_point slice = Clock::now() + kHeartbeatSlice;
      q_->cv.wait_until(hub_->mu, std::min(slice, until), ready);
      if (ready()) break;
      if (Clock::now() >= until) return std::nullopt;
    }
    if (!q_->frames.empty()) return q_->frames.pop();
    return std::nullopt;
  }

  void close() override {
    MutexLock lock(hub_->mu);
    if (q_->closed) return;
    if (!hub_->shut) {
      hub_->impl->close_local(id_);  // an orderly disconnect: its threads leave
    }
    q_->closed = true;
    q_->cv.notify_all();
  }

 private:
  static constexpr std::chrono::milliseconds kHeartbeatSlice{500};
  std::shared_ptr<LocalHub> hub_;
  ConnId id_;
  std::shared_ptr<LocalQueue> q_;
};

std::unique_ptr<Link> CoordinatorServer::make_local_link() {
  std::shared_ptr<LocalHub> hub = impl_->hub();
  MutexLock lock(hub->mu);
  if (hub->shut) {
    auto q = std::make_shared<LocalQueue>();
    q->frames.push(Frame{Error{ErrorCode::kShutdown, "the coordinator server has stopped"}});
    q->closed = true;
    return std::make_unique<LocalLink>(std::move(hub), 0, std::move(q));
  }
  if (impl_->is_child()) {
    throw TransportError(
        "a child coordinator has no local links: connect to it with an ipc:// or tcp:// link");
  }
  auto [id, q] = impl_->open_local();
  return std::make_unique<LocalLink>(std::move(hub), id, std::move(q));
}

CoordinatorServer::CoordinatorServer(ServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
CoordinatorServer::~CoordinatorServer() { impl_->stop(); }
const std::vector<std::string>& CoordinatorServer::endpoints() const { return impl_->endpoints(); }
const std::string& CoordinatorServer::control_endpoint() const {
  return impl_->control_endpoint();
}
const std::string& CoordinatorServer::curve_public_key() const {
  return impl_->curve_public_key();
}
ControlReply CoordinatorServer::control(const Control& request) { return impl_->control(request); }
ControlReply CoordinatorServer::forget(const std::string& participant) {
  return impl_->forget(participant);
}
uint64_t CoordinatorServer::refused_peers() const { return impl_->refused_peers(); }
uint64_t CoordinatorServer::bad_frames() const { return impl_->bad_frames(); }
uint64_t CoordinatorServer::dropped_peers() const { return impl_->dropped_peers(); }
uint64_t CoordinatorServer::shm_connections() const { return impl_->shm_connections(); }
void CoordinatorServer::stop() { impl_->stop(); }

ControlClient::ControlClient(const std::string& endpoint, const ConnectOptions& options) {
  ConnectOptions o = options;
  o.heartbeat_interval = Duration::zero();  // a control client is no participant
  o.hello = false;                          // control frames need no handshake
  link_ = connect(endpoint, o);
}
ControlClient::~ControlClient() = default;

std::optional<Frame> ControlClient::exchange(const Frame& request, Duration timeout) {
  link_->send(request);
  return link_->receive(timeout);
}

ControlReply ControlClient::request(const Control& request, Duration timeout) {
  link_->send(Frame{request});
  while (true) {
    std::optional<Frame> f = link_->receive(timeout);
    if (!f) {
      ControlReply r;
      r.ok = false;
      r.error = "timeout: no reply from the coordinator within " + format_seconds(timeout) + " s";
      return r;
    }
    if (auto* reply = std::get_if<ControlReply>(&*f)) return std::move(*reply);
    if (auto* err = std::get_if<Error>(&*f)) {
      ControlReply r;
      r.ok = false;
      r.error = err->reason;
      return r;
    }
  }
}

}  // namespace fieldproof::lockstep

namespace fieldproof::lockstep {

std::unique_ptr<CoordinatorServer> start_child_coordinator(ServerOptions options) {
  if (options.parent.empty()) {
    throw TransportError("a child coordinator needs the parent's endpoint (--parent EP)");
  }
  return std::make_unique<CoordinatorServer>(std::move(options));
}

}  // namespace fieldproof::lockstep
