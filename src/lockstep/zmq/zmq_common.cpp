#include "zmq_common.hpp"

#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/lockstep/zmq_socket.hpp"
#include "fieldproof/util/input_file.hpp"

namespace fieldproof::lockstep::zmqd {

void throw_zmq(const std::string& what) { throw TransportError(what + ": " + zmq_strerror(errno)); }

void check(const ZmqStatus& s, const std::string& what) {
  if (!s.ok()) throw TransportError(what + ": " + zmq_strerror(s.error()));
}

void check(const ZmqStatus& s) {
  if (!s.ok()) throw TransportError(s.message());
}

ZmqSocket open_socket(SocketType type, const std::string& what) {
  auto s = ZmqSocket::open(ZmqContext::process(), type);
  check(s.status(), what);
  return std::move(s).value();
}

std::string resolve_endpoint(std::string_view endpoint, std::string_view ipc_dir) {
  std::string ep(endpoint);
  if (ep.rfind("ipc://", 0) == 0) {
    std::string path = ep.substr(6);
    if (path.empty()) {
      throw TransportError("endpoint '" + ep +
                           "': an ipc endpoint needs a path, e.g. ipc://coordinator.sock");
    }
    if (path[0] != '/' && path[0] != '@') {
      std::string dir(ipc_dir);
      if (dir.empty()) dir = ".";
      path = dir + (dir.back() == '/' ? "" : "/") + path;
    }
    sockaddr_un addr{};
    if (path.size() >= sizeof(addr.sun_path)) {
      throw TransportError("endpoint '" + ep + "': the ipc path '" + path + "' is " +
                           std::to_string(path.size()) + " bytes, longer than the " +
                           std::to_string(sizeof(addr.sun_path) - 1) +
                           " a Unix socket allows; use a shorter directory");
    }
    return "ipc://" + path;
  }
  if (ep.rfind("tcp://", 0) == 0) {
    std::string rest = ep.substr(6);
    auto colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
      throw TransportError("endpoint '" + ep +
                           "': a tcp endpoint needs host:port, e.g. tcp://127.0.0.1:5545 "
                           "(port * picks a free one when binding)");
    }
    std::string port = rest.substr(colon + 1);
    if (port != "*") {
      for (char c : port) {
        if (c < '0' || c > '9') {
          throw TransportError("endpoint '" + ep + "': port '" + port + "' is not a number");
        }
      }
      if (port.size() > 5 || std::stoi(port) > 65535) {
        throw TransportError("endpoint '" + ep + "': port " + port + " is out of range");
      }
    }
    return ep;
  }
  if (ep.rfind("inproc://", 0) == 0) return ep;
  throw TransportError("endpoint '" + ep +
                       "': unsupported transport; use ipc://PATH or tcp://HOST:PORT");
}

void set_max_message_size(ZmqSocket& socket, size_t limit) {
  constexpr auto kMax = static_cast<size_t>(INT64_MAX) - kMaxMessageSlack;
  const auto value = static_cast<int64_t>(std::min(limit, kMax) + kMaxMessageSlack);
  check(socket.set_int64(ZMQ_MAXMSGSIZE, value, "ZMQ_MAXMSGSIZE"));
}

namespace {

void check_curve_server_key(const CurveClientKeys& keys) {
  if (keys.server_public_key.size() != 40) {
    throw TransportError("the CURVE server public key must be 40 Z85 characters, got " +
                         std::to_string(keys.server_public_key.size()));
  }
}

CurveKeyPair client_pair(const CurveClientKeys& keys) {
  CurveKeyPair own{keys.client_public_key, keys.client_secret_key};
  if (own.public_key.empty() || own.secret_key.empty()) own = generate_curve_keypair();
  return own;
}

}  // namespace

void apply_client_curve(ZmqSocket& socket, const CurveClientKeys& keys) {
  if (keys.server_public_key.empty()) return;
  check_curve_server_key(keys);
  const CurveKeyPair own = client_pair(keys);
  check(socket.set_bytes(ZMQ_CURVE_SERVERKEY, keys.server_public_key, "CURVE server key"));
  check(socket.set_bytes(ZMQ_CURVE_PUBLICKEY, own.public_key, "CURVE public key"));
  check(socket.set_bytes(ZMQ_CURVE_SECRETKEY, own.secret_key, "CURVE secret key"));
}

}  // namespace fieldproof::lockstep::zmqd

namespace fieldproof::lockstep {

CurveKeyPair generate_curve_keypair() {
  char pub[41] = {};
  char sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0) zmqd::throw_zmq("zmq_curve_keypair (CURVE unavailable?)");
  return {pub, sec};
}

std::string curve_public_key(const std::string& secret_key) {
  if (secret_key.size() != 40) {
    throw TransportError("a CURVE secret key must be 40 Z85 characters, got " +
                         std::to_string(secret_key.size()));
  }
  char pub[41] = {};
  if (zmq_curve_public(pub, secret_key.c_str()) != 0) {
    zmqd::throw_zmq("deriving the CURVE public key (not a Z85 key?)");
  }
  return pub;
}

}  // namespace fieldproof::lockstep

namespace fieldproof::lockstep {

bool is_curve_key(const std::string& key) {
  uint8_t raw[32];
  return key.size() == 40 && zmq_z85_decode(raw, key.c_str()) != nullptr;
}

Result<std::vector<std::string>> read_authorized_keys(const std::string& path) {
  const Result<std::string> file =
      util::read_input_file(path, util::kMaxSmallFileBytes, "the authorized keys file");
  if (!file.ok()) return file.status();
  const auto bad_line = [&path](int n, const std::string& why) {
    return Status(StatusCode::kInvalidArgument, path + ":" + std::to_string(n) + ": " + why);
  };
  std::istringstream in(*file);
  std::vector<std::string> keys;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    // '#' is a Z85 character: a comment is a line that starts with it, or text after the key
    // separated by white space.
    std::istringstream words(line);
    std::string text;
    if (!(words >> text) || text[0] == '#') continue;
    std::string rest;
    if (words >> rest && rest[0] != '#') {
      return bad_line(n,
                      "'" + rest + "' after the key: one key per line (a comment starts with #)");
    }
    if (!is_curve_key(text)) {
      return bad_line(n, "'" + text +
                             "' is not a client public key (40 Z85 characters, as `fieldproof "
                             "keygen` prints)");
    }
    keys.push_back(text);
  }
  return keys;
}

bool zmqd::shm_allowed_by_environment() {
  const char* v = std::getenv(zmqd::kShmEnv);
  if (v == nullptr) return true;
  const std::string s(v);
  return !(s == "0" || s == "off" || s == "no" || s == "false");
}

}  // namespace fieldproof::lockstep
