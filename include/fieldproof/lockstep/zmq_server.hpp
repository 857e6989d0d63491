// CoordinatorServer: a CoordinatorCore behind ZeroMQ sockets, on a thread of its own.
//
//   ServerOptions o;
//   o.bind = {"ipc://coordinator.sock", "tcp://0.0.0.0:*"};
//   o.ipc_dir = run_dir;                        // relative ipc paths resolve here
//   o.control = "ipc://control.sock";           // optional
//   o.core.max_rtf = 1.0;
//   CoordinatorServer server(std::move(o));     // binds (throws TransportError), then serves
//   for (auto& ep : server.endpoints()) std::cout << ep << "\n";   // tcp ports resolved
//   ControlReply r = server.control({.op = ControlOp::kPause});    // from any thread
//
// Sockets: one ROUTER bound to every `bind` endpoint (participants' DEALER links connect to any
// of them); each peer's routing id is one ConnId of the core. Frames that do not decode, are
// oversized or of an unknown kind are answered with an Error frame to that peer only and logged;
// the server keeps running. A Control frame on the main socket is answered with a ControlReply
// (so `fieldproof clock` can use the same endpoint); the optional `control` endpoint is a second
// ROUTER that accepts only Control frames (a peer there cannot act as a participant).
//
// CURVE: with `curve_secret_key` set, every endpoint of the server (bind and control) requires
// CURVE: a peer must know the server's public key (curve_public_key(secret)); a peer without it
// fails the handshake, is counted in refused_peers(), logged, and never reaches the core. With
// `authorized_keys` set, a ZAP handler (one thread per process, inproc://zeromq.zap.01) also
// checks the client's own public key against that list: any other key (the server's own
// included) is refused the same way, before a single frame of the peer reaches the core. Refusal
// log lines name the peer's address (tcp: ip:port; ipc: the peer's pid) and key, at most one per
// peer (a key; keyless peers count as one per endpoint) per refusal_log_interval, the next one
// with the count of those suppressed.
//
// Floods (docs/lockstep.md, "Bounded queues"): every socket has ZMQ_MAXMSGSIZE set (a frame more
// than 64 KiB over max_message_bytes ends its connection inside ZeroMQ before it is allocated; one
// up to that is read and refused as kOversized), each connection's receive queue holds at most
// receive_hwm frames (a peer that sends faster than the server reads is slowed down by TCP, never
// buffered without bound) and its send queue at most send_hwm. A peer whose send queue is full (it
// does not read what it is sent) or that had max_refusals_in_row frames refused in a row is
// dropped: its connection is shut down, what it still had queued is discarded unanswered, and one
// line says so (rate limited per host like the refusals). A refusal line is written at most once
// per host per refusal_log_interval; the count of the others follows at the end of each interval.
//
// Liveness: the server monitors its sockets; when the connection of a peer closes (its process
// died, even by SIGKILL, or it closed without Leave) the core's connection_lost() runs within
// milliseconds: a regulating participant that vanished without Leave fails the run, named; a
// following one is dropped. A peer that keeps its connection but goes silent is found by the
// core's heartbeat rule (ack_timeout / follower_timeout); one that keeps sending heartbeats but
// holds a step past ack_timeout is found by the core's acknowledgement rule (coordinator.hpp).
//
// Cascade: with `parent` set the server is a child coordinator (cascade.hpp): its core runs in
// upstream mode, it announces its local minimum to the parent, forwards publishes up, fans the
// parent's ordered deliveries out and takes the parent's grants as a ceiling.
//
// Local links: make_local_link() connects a participant of the server's own process without a
// socket: frames pass as values and the core runs on the caller's thread under the server's lock
// (as with InProcessCoordinator), so a grant to a local participant costs no encoding, no system
// call and no thread hop. Frames the core sends to socket peers meanwhile are handed to the
// server thread, in order. The same core, protocol and guarantees as every other connection (a
// local link has no handshake and no CURVE: it is the process itself). Not on a child.
//
// Threading: every socket lives on the server's thread. The core and the callbacks below run on
// the server's thread or, for frames of a local link, on that link's thread, always under the
// server's lock, one at a time (keep them short, never call back into the server from them).
// control(), status(), endpoints(), make_local_link() and stop() are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/lockstep/coordinator.hpp"
#include "fieldproof/lockstep/protocol.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/util/status.hpp"

namespace fieldproof::lockstep {

struct ServerOptions {
  // Endpoints participants connect to: ipc://PATH (relative to ipc_dir) or tcp://HOST:PORT
  // (port * = any free port; endpoints() reports the chosen one). At least one.
  std::vector<std::string> bind;
  // An extra endpoint for Control frames only; empty = none.
  std::string control;
  // Directory relative ipc paths resolve against ("." when empty).
  std::string ipc_dir;
  // Z85 CURVE secret key of the server; empty = no CURVE.
  std::string curve_secret_key;
  // CURVE only: the client public keys (Z85, 40 characters) allowed in. nullopt = any client that
  // knows the server's public key. An empty list lets nobody in. Never the server's own key.
  std::optional<std::vector<std::string>> authorized_keys;
  // Refusal log lines (refused peers, bad frames): at most one per peer per this interval.
  Duration refusal_log_interval = seconds(10);
  // Bounded queues (see above): frames queued per connection, in and out; refused frames in a row
  // after which a peer is dropped. Each must be > 0.
  int receive_hwm = 1000;
  int send_hwm = 100000;
  uint32_t max_refusals_in_row = 1000;
  // Same-host shared memory (docs/lockstep.md): accept the offer of a participant connected over
  // ipc (also off when the environment sets FIELDPROOF_SHM=0; never in a child coordinator), with
  // rings of this many bytes per direction (a power of two, 4 KiB to 64 MiB).
  bool shared_memory = true;
  size_t shm_ring_bytes = size_t{1} << 20;
  // The core's settings (max_rtf, ack_timeout, follower_timeout, max_message_bytes, wall_now...).
  // An empty wall_now is replaced by SystemClock::wall_now().
  CoordinatorOptions core;

  // Log lines (bad frames, refused peers, failures; also the core's own refusals when core.log is
  // empty); empty = dropped.
  std::function<void(const std::string&)> log;
  // A regulating participant went silent past ack_timeout (or crashed): its name and the reason.
  std::function<void(const std::string& participant, const std::string& reason)> on_failure;
  // Every message in delivery order (the root's total order; in a child, the parent's order).
  std::function<void(const Publish&)> tap;
  // Every grant issued by this server's core.
  std::function<void(SimTime, uint64_t)> on_grant;
  // A peer failed the CURVE handshake (or another security handshake).
  std::function<void(const std::string& reason)> on_refused;
  // Every Announce that decoded, before the core handles it (lets a caller await registrations).
  std::function<void(const Announce&)> on_announce;
  // A connection switched to the same-host shared-memory transport (on the server thread).
  std::function<void()> on_shm_switch;

  // ---- cascade (child coordinator) ----
  // The parent coordinator's endpoint; empty = this is the root.
  std::string parent;
  // The name this child announces to the parent; empty = "cascade-<pid>".
  std::string child_name;
  // CURVE keys for the connection to the parent; heartbeat interval towards it.
  ConnectOptions parent_connect;
};

class CoordinatorServer {
 public:
  // Binds every endpoint and starts serving. Throws TransportError naming the endpoint when one
  // is malformed or cannot be bound (in use, directory missing, path too long), when no bind
  // endpoint is given, or when authorized_keys is set without CURVE or holds a malformed key.
  explicit CoordinatorServer(ServerOptions options);
  // Stops (sends Error{kShutdown} to every connected peer) and joins.
  ~CoordinatorServer();
  CoordinatorServer(const CoordinatorServer&) = delete;
  CoordinatorServer& operator=(const CoordinatorServer&) = delete;

  // The bound endpoints, resolved (absolute ipc paths, tcp ports filled in), in `bind` order.
  const std::vector<std::string>& endpoints() const;
  // The resolved control endpoint, empty when none.
  const std::string& control_endpoint() const;
  // The server's public CURVE key (empty without CURVE).
  const std::string& curve_public_key() const;

  // Runs a control request on the server thread and returns its reply. Thread-safe; blocks until
  // the server answers (or returns ok = false when it has stopped).
  ControlReply control(const Control& request);
  CoordinatorStatus status() { return control(status_request()).status; }
  // CoordinatorCore::forget on the server thread (thread-safe, blocks like control()).
  ControlReply forget(const std::string& participant);

  // A connection for a participant in this process (see Local links above). Once the server has
  // stopped, the link delivers Error{kShutdown} only. Throws TransportError on a child
  // coordinator (its participants are at the parent's service through sockets).
  std::unique_ptr<Link> make_local_link();

  // Peers refused at the security handshake so far.
  uint64_t refused_peers() const;
  // Frames refused as undecodable / oversized / unknown kind so far.
  uint64_t bad_frames() const;
  // Connections dropped for a full send queue or too many refusals in a row, so far.
  uint64_t dropped_peers() const;
  // Connections that switched to the same-host shared-memory transport so far.
  uint64_t shm_connections() const;

  // Stops serving and joins the thread. Idempotent.
  void stop();

 private:
  class Impl;
  struct LocalHub;
  class LocalLink;
  std::unique_ptr<Impl> impl_;
};

// Reads an allow-list of client public keys (ServerOptions::authorized_keys): one 40-character Z85
// key per line; blank lines and lines starting with '#' are skipped, and so is a '#' comment
// after a key. kInvalidArgument "PATH:LINE: ..." on a line that is not a key; an error naming the
// file when it cannot be read.
Result<std::vector<std::string>> read_authorized_keys(const std::string& path);
// Whether `key` is a 40-character Z85 CURVE key.
bool is_curve_key(const std::string& key);

// A control client: sends Control frames to a server's control (or main) endpoint.
// Not thread-safe; one request at a time. Throws TransportError on a bad endpoint.
class ControlClient {
 public:
  explicit ControlClient(const std::string& endpoint, const ConnectOptions& options = {});
  ~ControlClient();
  ControlClient(const ControlClient&) = delete;
  ControlClient& operator=(const ControlClient&) = delete;
  // The reply, or ok = false with error "timeout ..." when none came within `timeout`.
  ControlReply request(const Control& request, Duration timeout = seconds(5));
  // Any frame (a PlayerControl to a player, docs/protocol.md 8.1): the first frame that comes
  // back, or nullopt when none came within `timeout`.
  std::optional<Frame> exchange(const Frame& request, Duration timeout = seconds(5));

 private:
  std::unique_ptr<Link> link_;
};

}  // namespace fieldproof::lockstep
