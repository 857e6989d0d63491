// A flooding peer for hwm_test (a process of its own, so the test can kill -9 it): a DEALER that
// connects to ENDPOINT and sends small garbage frames as fast as the coordinator takes them,
// reading nothing. It prints "throttled" once a send finds its queue full (the coordinator has
// stopped reading its connection: its receive queue is at the high-water mark), then goes on.
//   hardening_flooder ENDPOINT [SERVER_PUBLIC_KEY]   (with a key: as a CURVE client)
#include <zmq.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: hardening_flooder ENDPOINT [SERVER_PUBLIC_KEY]\n");
    return 2;
  }
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
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  char frame[64];
  bool told = false;
  for (;;) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const size_t len = 8 + x % 57;
    for (size_t i = 0; i < len; ++i) frame[i] = static_cast<char>(x >> (8 * (i % 8)));
    if (zmq_send(s, frame, len, 0) < 0 && errno == EAGAIN && !told) {
      std::printf("throttled\n");
      std::fflush(stdout);
      told = true;
    }
  }
}
