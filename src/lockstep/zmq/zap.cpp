// The process-wide ZAP handler: a REP socket on inproc://zeromq.zap.01, on a detached thread that
// lives as long as the process (like the context it belongs to, which is never terminated).
#include "zap.hpp"

#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <thread>
#include <unordered_map>
#include <vector>

#include "zmq_common.hpp"

#include "fieldproof/lockstep/zmq_socket.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::lockstep::zmqd {
namespace {

struct Policy {
  std::set<std::string> allowed;
  std::string server_public_key;
  std::function<void(const ZapRefusal&)> on_refused;
};

struct Registry {
  Mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<Policy>> domains FIELDPROOF_GUARDED_BY(mutex);
  std::once_flag started;
  std::string start_error;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: the handler thread may outlive main
  return *r;
}

void reply(ZmqSocket& socket, const std::string& version, const std::string& request_id,
           const char* code, const std::string& text, const std::string& user) {
  // A reply that cannot be sent leaves libzmq's handshake to time out: nothing else to do here.
  (void)socket.send_multipart({version, request_id, code, text, user, ""});
}

// The verdict on one request of a domain with a policy: 200 with the key, or 400 with why.
void judge(ZmqSocket& socket, const std::vector<std::string>& r, const Policy& policy) {
  ZapRefusal refusal;
  refusal.address = r[3];
  if (r[5] != "CURVE" || r.size() < 7 || r[6].size() != 32) {
    refusal.key = "none";
    refusal.reason = "not a CURVE client (mechanism " + r[5] + ")";
  } else {
    refusal.key = z85_key(r[6].data());
    if (refusal.key == policy.server_public_key) {
      refusal.reason = "the client presented the server's own key";
    } else if (policy.allowed.count(refusal.key) == 0) {
      refusal.reason = "the key is not in the authorized keys";
    } else {
      reply(socket, r[0], r[1], "200", "OK", refusal.key);
      return;
    }
  }
  if (policy.on_refused) policy.on_refused(refusal);
  reply(socket, r[0], r[1], "400", refusal.reason, "");
}

void serve(ZmqSocket& socket) {
  while (true) {
    // version, request id, domain, address, routing id, mechanism, credentials...
    auto received = socket.recv_multipart();
    if (!received.ok()) continue;  // interrupted: a request is whole or not received at all
    const std::vector<std::string>& r = *received;
    if (r.size() < 6) {
      if (!r.empty()) reply(socket, r[0], r.size() > 1 ? r[1] : "", "500", "bad ZAP request", "");
      continue;
    }
    std::shared_ptr<Policy> policy;
    {
      MutexLock lock(registry().mutex);
      auto it = registry().domains.find(r[2]);
      if (it != registry().domains.end()) policy = it->second;
    }
    if (!policy) {
      reply(socket, r[0], r[1], "200", "OK", "");
      continue;
    }
    judge(socket, r, *policy);
  }
}

void start_handler() {
  auto opened = ZmqSocket::open(ZmqContext::process(), SocketType::kRep);
  if (!opened.ok()) {
    registry().start_error = "creating the ZAP socket: " + opened.status().message();
    return;
  }
  ZmqSocket s = std::move(opened).value();
  (void)s.set_linger(0);
  if (ZmqStatus b = s.bind("inproc://zeromq.zap.01"); !b.ok()) {
    registry().start_error = "the ZAP handler: " + b.message();
    return;
  }
  std::thread([s = std::move(s)]() mutable { serve(s); }).detach();
}

}  // namespace

std::string z85_key(const void* bytes32) {
  char text[41] = {};
  zmq_z85_encode(text, static_cast<const uint8_t*>(bytes32), 32);
  return text;
}

ZapDomain::ZapDomain(std::set<std::string> allowed, std::string server_public_key,
                     std::function<void(const ZapRefusal&)> on_refused) {
  Registry& r = registry();
  std::call_once(r.started, start_handler);
  if (!r.start_error.empty()) throw TransportError(r.start_error);
  static std::atomic<uint64_t> next{1};
  name_ = "fieldproof-" + std::to_string(next.fetch_add(1));
  auto policy = std::make_shared<Policy>();
  policy->allowed = std::move(allowed);
  policy->server_public_key = std::move(server_public_key);
  policy->on_refused = std::move(on_refused);
  MutexLock lock(r.mutex);
  r.domains.emplace(name_, std::move(policy));
}

ZapDomain::~ZapDomain() {
  MutexLock lock(registry().mutex);
  registry().domains.erase(name_);
}

}  // namespace fieldproof::lockstep::zmqd
