// ZAP (ZeroMQ Authentication Protocol, RFC 27) for the coordinator's CURVE endpoints: one handler
// thread per process, bound to inproc://zeromq.zap.01 of the process-wide context, answering for
// every server that registered a domain. A server with an allow-list registers one ZapDomain and
// sets ZMQ_ZAP_DOMAIN on its sockets; requests for any other domain (a CURVE server without an
// allow-list) are accepted, as they would be without a handler.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>

namespace fieldproof::lockstep::zmqd {

// What the handler saw of a refused peer.
struct ZapRefusal {
  std::string address;  // the peer's address as ZeroMQ reports it (tcp: the IP; ipc: may be empty)
  std::string key;      // the client's public key, Z85
  std::string reason;
};

class ZapDomain {
 public:
  // `allowed`: Z85 client public keys. `server_public_key` is refused even when listed (a client
  // presenting the server's own key holds a copy of its secret). `on_refused` is called on the
  // handler thread, before the peer learns the answer; keep it short.
  ZapDomain(std::set<std::string> allowed, std::string server_public_key,
            std::function<void(const ZapRefusal&)> on_refused);
  ~ZapDomain();
  ZapDomain(const ZapDomain&) = delete;
  ZapDomain& operator=(const ZapDomain&) = delete;
  // The ZMQ_ZAP_DOMAIN value to set on the server's sockets.
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// Z85 text of a 32-byte binary key.
std::string z85_key(const void* bytes32);

}  // namespace fieldproof::lockstep::zmqd
