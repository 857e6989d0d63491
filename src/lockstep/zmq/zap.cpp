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

std::vector<std::string> receive_request(void* socket) {
  std::vector<std::string> parts;
  while (true) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, socket, 0) < 0) {
      zmq_msg_close(&m);
      parts.clear();
      return parts;
    }
    parts.emplace_back(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
    const bool more = zmq_msg_more(&m);
    zmq_msg_close(&m);
    if (!more) return parts;
  }
}

void reply(void* socket, const std::string& version, const std::string& request_id,
           const char* code, const std::string& text, const std::string& user) {
  const std::string parts[] = {version, request_id, code, text, user, ""};
  for (size_t i = 0; i < 6; ++i) {
    zmq_send(socket, parts[i].data(), parts[i].size(), i + 1 < 6 ? ZMQ_SNDMORE : 0);
  }
}

void serve(void* socket) {
  while (true) {
    // version, request id, domain, address, routing id, mechanism, credentials...
    std::vector<std::string> r = receive_request(socket);
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
    ZapRefusal refusal;
    refusal.address = r[3];
    if (r[5] != "CURVE" || r.size() < 7 || r[6].size() != 32) {
      refusal.key = "none";
      refusal.reason = "not a CURVE client (mechanism " + r[5] + ")";
    } else {
      refusal.key = z85_key(r[6].data());
      if (refusal.key == policy->server_public_key) {
        refusal.reason = "the client presented the server's own key";
      } else if (policy->allowed.count(refusal.key) == 0) {
        refusal.reason = "the key is not in the authorized keys";
      } else {
        reply(socket, r[0], r[1], "200", "OK", refusal.key);
        continue;
      }
    }
    if (policy->on_refused) policy->on_refused(refusal);
    reply(socket, r[0], r[1], "400", refusal.reason, "");
  }
}

void start_handler() {
  void* s = zmq_socket(context(), ZMQ_REP);
  if (s == nullptr) {
    registry().start_error = std::string("creating the ZAP socket: ") + zmq_strerror(errno);
    return;
  }
  int linger = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_bind(s, "inproc://zeromq.zap.01") != 0) {
    registry().start_error =
        std::string("binding the ZAP handler (inproc://zeromq.zap.01): ") + zmq_strerror(errno);
    zmq_close(s);
    return;
  }
  std::thread([s] { serve(s); }).detach();
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
