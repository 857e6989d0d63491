// ZeroMQ links to a coordinator: what a participant in another process (or on another machine)
// uses instead of the in-process transport. Everything here hides ZeroMQ; no zmq.h in this header.
//
//   auto p = participant_from_environment({.name = "ugv1"});   // FIELDPROOF_COORDINATOR=ipc://...
//   auto q = connect_participant("tcp://10.0.0.2:5545", {.name = "ugv2"},
//                                {.curve = {.server_public_key = key}});
//
// Endpoints: ipc://PATH (a Unix socket; relative paths resolve against ConnectOptions::ipc_dir)
// and tcp://HOST:PORT. A link is a DEALER socket that connects in the background: frames sent
// before the coordinator is up wait in the queue, so start order does not matter.
//
// Handshake: the link's first frame is Hello{kProtocolVersion}; the coordinator's Welcome is
// consumed by the link. A Welcome of another version, a frame of another version or
// Error{kVersion} reaches the participant as Error{kVersion, "the coordinator speaks protocol
// version X; this client speaks version 2"} (fatal).
//
// Heartbeats: when the link has sent nothing for `heartbeat_interval`, it sends Heartbeat{name}
// (the name is taken from the first Announce it carries), so a participant that is waiting or
// computing is not mistaken for a dead one; the coordinator detects real silence.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "fieldproof/lockstep/link.hpp"
#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::lockstep {

// A bad endpoint, a bad key, a socket that cannot bind: thrown by the ZeroMQ transports with a
// message that names the endpoint and what to do.
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Z85 CURVE keys (40 characters each).
struct CurveKeyPair {
  std::string public_key;
  std::string secret_key;
};
// A fresh key pair (libsodium through libzmq). Throws TransportError when CURVE is unavailable.
CurveKeyPair generate_curve_keypair();
// The public key that belongs to a secret key.
std::string curve_public_key(const std::string& secret_key);

struct CurveClientKeys {
  // The coordinator's public key; empty = no CURVE (plain connection).
  std::string server_public_key;
  // This client's own pair; generated per link when empty. A server with authorized keys
  // (ServerOptions::authorized_keys) lets in only the pairs whose public key it lists.
  std::string client_public_key;
  std::string client_secret_key;
};

struct ConnectOptions {
  CurveClientKeys curve;
  // A Heartbeat is sent after this long without any other frame. Must be well below the
  // coordinator's follower_timeout / ack_timeout.
  Duration heartbeat_interval = milliseconds(500);
  // Relative ipc paths resolve here ("." when empty).
  std::string ipc_dir;
  // How long close() (and the destructor) waits for unsent frames (the Leave) to go out.
  Duration linger = milliseconds(500);
  // How long the link waits for the coordinator's first frame. When none came by then, receive()
  // delivers Error{kShutdown, "no coordinator answered at <endpoint> within <t> s ..."} (so a
  // Participant's constructor returns instead of waiting forever). nullopt = the environment's
  // FIELDPROOF_CONNECT_TIMEOUT ("10s", "500ms"; see parse_duration) or 10 s when it is unset.
  std::optional<Duration> connect_timeout;
  // Send Hello as the link's first frame (docs/protocol.md, the handshake). Participants need it;
  // a control client (ControlClient) sends only Control frames and clears it.
  bool hello = true;
  // ipc endpoints: offer the same-host shared-memory transport in the Hello (docs/lockstep.md,
  // "Same-host shared memory"); the link switches to it when the coordinator accepts and stays on
  // ZeroMQ otherwise. Also off when the environment sets FIELDPROOF_SHM=0.
  bool shared_memory = true;
};

// The environment variable that sets the default connect timeout.
inline constexpr const char* kConnectTimeoutEnv = "FIELDPROOF_CONNECT_TIMEOUT";
// The connect timeout `options` asks for (see ConnectOptions::connect_timeout). Throws
// TransportError naming the variable when FIELDPROOF_CONNECT_TIMEOUT is not a duration.
Duration effective_connect_timeout(const ConnectOptions& options);

// A Link over ZeroMQ. Thread-safe: send() may be called from any thread while another blocks in
// receive() (ZeroMQ sockets are not thread-safe; the link serialises access internally and wakes
// a blocked receive() without a busy loop). close() is idempotent; after it receive() returns
// std::nullopt at once and send() drops the frame. Throws TransportError on a bad endpoint or key.
std::unique_ptr<Link> connect(const std::string& endpoint, const ConnectOptions& options = {});

// A Participant over connect(endpoint, connect_options). Throws TransportError when it could not
// join: no coordinator answered within the connect timeout (the message names the endpoint), the
// coordinator refused the connection (CURVE, authorized keys) or the name.
std::unique_ptr<Participant> connect_participant(const std::string& endpoint,
                                                 ParticipantOptions options,
                                                 const ConnectOptions& connect_options = {});

// The environment variable naming the coordinator's endpoint for participant_from_environment.
inline constexpr const char* kCoordinatorEnv = "FIELDPROOF_COORDINATOR";
// A Participant connected to $FIELDPROOF_COORDINATOR (and $FIELDPROOF_COORDINATOR_SERVER_KEY, the
// CURVE public key, when set). Throws TransportError saying what to set when it is unset or empty.
std::unique_ptr<Participant> participant_from_environment(ParticipantOptions options,
                                                          ConnectOptions connect_options = {});

}  // namespace fieldproof::lockstep
