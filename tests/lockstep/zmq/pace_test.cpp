// The pace regulator over a real socket and a real process: the measured real-time factor stays
// within 5 % of max_rtf over 5 s of wall time (label slow, run alone: it measures wall time).
#include <gtest/gtest.h>

#include <algorithm>

#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "lockstep/zmq/test_support.hpp"
#include "lockstep/zmq/trace_participant.hpp"

namespace fieldproof::lockstep {
namespace {

using namespace std::chrono_literals;
using testing::Events;
using testing::Process;
using testing::TempDir;
using testing::TraceSpec;

// ---- pace --------------------------------------------------------------------------------------

TEST(Pace, MeasuredRtfStaysWithinFivePercentOfMaxRtfOverFiveSeconds) {
  TempDir dir;
  constexpr double kRtf = 2.0;
  const SimTime end = SimTime::from_ns(10'000'000'000);  // 5 s of wall time at 2x
  WallNow wall = SystemClock::wall_now();
  Events<std::pair<SimTime, SimTime>> grants;  // (grant, wall)
  ServerOptions o;
  o.bind = {"ipc://coordinator.sock"};
  o.ipc_dir = dir.path();
  o.core.max_rtf = kRtf;
  o.on_grant = [&](SimTime t, uint64_t) { grants.push({t, wall()}); };
  CoordinatorServer server(std::move(o));
  Process p({FIELDPROOF_PARTICIPANT_AUX, "--endpoint", server.endpoints()[0], "--name", "paced",
             "--period-ms", "1", "--until-ms", "10000", "--trace", dir.file("paced.trace")});
  ASSERT_TRUE(grants.await([&](const auto& g) { return !g.empty() && g.back().first >= end; }, 30s));
  auto g = grants.snapshot();
  // From the first grant after 100 ms of simulated time (the start-up is left out).
  auto first = std::find_if(g.begin(), g.end(),
                            [](const auto& e) { return e.first >= SimTime::from_ns(100'000'000); });
  ASSERT_NE(first, g.end());
  const auto& last = g.back();
  double sim = (last.first - first->first).seconds_f();
  double wall_s = (last.second - first->second).seconds_f();
  double rtf = sim / wall_s;
  EXPECT_NEAR(rtf, kRtf, kRtf * 0.05) << "sim " << sim << " s over wall " << wall_s << " s";
  EXPECT_EQ(p.wait(30s), 0);
}

}  // namespace
}  // namespace fieldproof::lockstep
