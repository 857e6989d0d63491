// A flooding peer for hwm_test (a process of its own, so the test can kill -9 it): a DEALER that
// connects to ENDPOINT and sends small garbage frames as fast as the coordinator takes them,
// reading nothing. It prints "throttled" once a send finds its queue full (the coordinator has
// stopped reading its connection: its receive queue is at the high-water mark), then goes on.
//   hardening_flooder garbage|valid ENDPOINT [SERVER_PUBLIC_KEY]   (with a key: a CURVE client)
// garbage: random bytes (refused, so the coordinator drops the peer after 1000); valid: a Hello,
// an Announce of a following participant, then Heartbeats, which are served, never refused.
#include <zmq.h>

#include "fieldproof/lockstep/codec.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>

#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: hardening_flooder garbage|valid ENDPOINT [SERVER_PUBLIC_KEY]\n");
    return 2;
  }
  const bool valid = std::string(argv[1]) == "valid";
  ++argv;
  --argc;
  void* ctx = zmq_ctx_new();
  void* s = zmq_socket(ctx, ZMQ_DEALER);
  int zero = 0;
  int timeout_ms = 50;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(s, ZMQ_SNDTIMEO, &timeout_ms, sizeof timeout_ms);
  if (argc == 3) {
    char pub[41];
    char sec[41];
    if (zmq_curve_keypair(pub, sec) != 0) return 1;
    zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, argv[2], 40);
    zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 40);
    zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 40);
  }
  if (zmq_connect(s, argv[1]) != 0) return 1;
  namespace ls = fieldproof::lockstep;
  const std::string name = "flooder-" + std::to_string(::getpid());
  const std::string heartbeat = ls::encode_frame(ls::Heartbeat{name});
  if (valid) {
    for (const std::string& f :
         {ls::encode_frame(ls::Hello{ls::kProtocolVersion, "hardening_flooder"}),
          ls::encode_frame(ls::Announce{name, "main", ls::Role::kFollowing,
                                        fieldproof::SimTime::infinite()})}) {
      zmq_send(s, f.data(), f.size(), 0);
    }
  }
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  char frame[64];
  bool told = false;
  for (;;) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    size_t len = 8 + x % 57;
    for (size_t i = 0; i < len; ++i) frame[i] = static_cast<char>(x >> (8 * (i % 8)));
    const char* data = frame;
    if (valid) {
      data = heartbeat.data();
      len = heartbeat.size();
    }
    if (zmq_send(s, data, len, 0) < 0 && errno == EAGAIN && !told) {
      std::printf("throttled\n");
      std::fflush(stdout);
      told = true;
    }
  }
}
