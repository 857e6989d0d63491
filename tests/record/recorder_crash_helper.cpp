// Helper process for recorder_crash_test: records into a real file, closes a chunk by the wall-age
// rule, records a few more messages into the open chunk, prints "ready" and waits to be killed.
//
//   recorder_crash_helper FILE N    # N messages on /a (seq 1..N) and one event, then a closed
//                                   # chunk; then 5 messages on /late that stay in memory
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fieldproof/msgs/types.hpp"
#include "fieldproof/record/recorder.hpp"

int main(int argc, char** argv) {
  using namespace fieldproof;
  using namespace fieldproof::record;
  if (argc != 3) {
    std::fprintf(stderr, "usage: recorder_crash_helper FILE N\n");
    return 2;
  }
  const int n = std::atoi(argv[2]);
  SimTime wall = SimTime::from_ns(0);
  RecorderOptions options;
  options.wall_now = [&wall] { return wall; };
  options.chunk_size = 64 * 1024 * 1024;  // only the wall-age rule closes chunks here
  options.run = {{"run_id", "crash"}};
  Recorder rec(options);
  if (Status s = rec.open(argv[1]); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return 1;
  }
  auto publish = [&](const char* topic, int i) {
    lockstep::Publish p;
    p.participant = "helper";
    p.topic = topic;
    p.type = std::string(msgs::kTwist);
    p.stamp = SimTime::from_ns(int64_t{i} * 1'000'000);
    p.seq = static_cast<uint64_t>(i);
    p.payload = std::string(64, static_cast<char>('a' + i % 26));
    return rec.on_message(p);
  };
  for (int i = 1; i <= n; ++i) {
    if (!publish("/a", i).ok()) return 1;
  }
  if (!rec.event(SimTime::from_ns(int64_t{n} * 1'000'000), {{"event", "before_kill"}}).ok()) {
    return 1;
  }
  wall = wall + seconds(2);
  if (!rec.poll().ok() || rec.chunk_count() != 1) return 1;
  for (int i = 1; i <= 5; ++i) {
    if (!publish("/late", n + i).ok()) return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  // Wait for the SIGKILL; if the test goes away instead (stdin closed), leave without finalising.
  char c = 0;
  while (::read(STDIN_FILENO, &c, 1) > 0) {
  }
  ::_exit(3);
}
