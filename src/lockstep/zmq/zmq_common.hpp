// Private helpers of the ZeroMQ transports: the process-wide context, errors, endpoints, CURVE.
#pragma once

#include <zmq.h>

#include <string>
#include <string_view>

#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_socket.hpp"

namespace fieldproof::lockstep::zmqd {

// Throws TransportError with `what` and zmq_strerror(errno).
[[noreturn]] void throw_zmq(const std::string& what);

// Throws TransportError "<what>: <zmq_strerror>" when `s` failed (what names the step the way the
// transports' messages always have, whatever the wrapper called it).
void check(const ZmqStatus& s, const std::string& what);
// Throws TransportError with the wrapper's own message ("setting ZMQ_LINGER: ...") when `s` failed.
void check(const ZmqStatus& s);
// A socket of `type` on the process-wide ZeroMQ context (ZmqContext::process()), or throws
// "<what>: <zmq_strerror>".
ZmqSocket open_socket(SocketType type, const std::string& what);

// Validates an endpoint and resolves a relative ipc path against `ipc_dir`:
//   "ipc://coordinator.sock" + "/run/x" -> "ipc:///run/x/coordinator.sock"; "ipc:///abs" as is;
//   "tcp://host:port" / "tcp://host:*" as is. Anything else throws TransportError with a reason.
std::string resolve_endpoint(std::string_view endpoint, std::string_view ipc_dir);

// Sets ZMQ_MAXMSGSIZE to `limit` + kMaxMessageSlack: ZeroMQ ends a connection whose next message
// is longer, before allocating it (a length read from a stranger's bytes); a frame between the
// limit and that is still read and refused with a reason (kOversized).
inline constexpr size_t kMaxMessageSlack = size_t{64} << 10;
void set_max_message_size(ZmqSocket& socket, size_t limit);

// Applies CURVE client settings (server public key; the client's own pair, generated when empty).
void apply_client_curve(ZmqSocket& socket, const CurveClientKeys& keys);

// Whether the environment allows the same-host shared-memory transport: FIELDPROOF_SHM unset,
// empty or anything but 0/off/no/false (the tests run every ipc case both ways with it).
inline constexpr const char* kShmEnv = "FIELDPROOF_SHM";
bool shm_allowed_by_environment();

// The Hello / Welcome free-text markers of the shared-memory switch (docs/protocol.md 5.1):
// Hello.client ends with kShmOffer; an accepting Welcome.coordinator ends with
// kShmAccept + "/proc/PID/fd/FD:TOKEN"; the client that mapped it sends a second Hello ending
// with kShmSwitch as its last frame on the socket, answered by a plain Welcome, the coordinator's
// last frame on the socket.
inline constexpr std::string_view kShmOffer = " +shm";
inline constexpr std::string_view kShmAccept = " +shm=";
inline constexpr std::string_view kShmSwitch = " +shm-ring";

}  // namespace fieldproof::lockstep::zmqd
