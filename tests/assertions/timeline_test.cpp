// within_time and mission_time on synthetic timelines: passing, failing the moment a limit
// passes, on a bad ending, too early, never started; evidence and metrics; the settling order of
// depends_on at the end of the timeline.
#include <gtest/gtest.h>

#include "stream.hpp"

namespace fieldproof::assertions {
namespace {

using testing::Stream;

constexpr const char* kQuick = R"(assertions:
  - name: quick
    type: within_time
    action: drive
    max_s: 5s
)";

TEST(WithinTime, PassesWithTheDurationAsEvidenceAndMetric) {
  Stream s(kQuick);
  s.start("drive", 1.0);
  s.end("drive", 4.5);
  const auto r = s.result("quick");
  ASSERT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(r.evidence["started_t_s"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r.evidence["duration_s"].get<double>(), 3.5);
  EXPECT_EQ(r.evidence["action_status"], "ok");
  EXPECT_DOUBLE_EQ(s.metric("quick", "duration_s"), 3.5);
}

TEST(WithinTime, FailsTheMomentMaxPassesWithTheElapsedTime) {
  Stream s(kQuick);
  s.start("drive", 1.0);
  s.tick(6.0);
  EXPECT_EQ(s.status("quick"), Verdict::kPending);
  s.tick(6.5);
  const auto r = s.result("quick");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.reason, "drive has not completed 5 s after its start");
  // Judged at the limit itself, whenever the tick that saw it came.
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 6.0);
  EXPECT_DOUBLE_EQ(r.evidence["elapsed_s"].get<double>(), 5.0);
}

TEST(WithinTime, FailsWhenItsEntryIsSkippedWithoutStarting) {
  Stream s(kQuick);
  s.end("drive", 2.0, "skipped");
  const auto r = s.result("quick");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.reason, "drive never started (it ended skipped)");
}

TEST(WithinTime, FailsAtTheEndWhenTheActionNeverStarted) {
  Stream s(kQuick);
  s.finish(10.0);
  EXPECT_EQ(s.result("quick").reason, "drive never started");
}

constexpr const char* kWhole = R"(assertions:
  - name: mission
    type: mission_time
    max_s: 20s
    min_s: 5s
)";

TEST(MissionTime, TheWholeTimelinePassesAtItsEnd) {
  Stream s(kWhole);
  s.finish(12.0);
  const auto r = s.result("mission");
  ASSERT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(r.evidence["started_t_s"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(r.evidence["ended_t_s"].get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(s.metric("mission", "duration_s"), 12.0);
}

TEST(MissionTime, FailsTheMomentMaxPassesWithoutTheEnd) {
  Stream s(kWhole);
  s.tick(20.0);
  EXPECT_EQ(s.status("mission"), Verdict::kPending);
  s.tick(20.1);
  const auto r = s.result("mission");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 20.0);
  EXPECT_NE(r.reason.find("has not completed 20 s after its start"), std::string::npos) << r.reason;
}

TEST(MissionTime, FailsWhenTheSpanIsShorterThanMin) {
  Stream s(kWhole);
  s.finish(3.0);
  const auto r = s.result("mission");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_NE(r.reason.find("shorter than min_s 5 s"), std::string::npos) << r.reason;
}

constexpr const char* kSpan = R"(assertions:
  - name: span
    type: mission_time
    start: drive
    end: back
    max_s: 10s
)";

TEST(MissionTime, ASpanRunsFromTheStartEntryToTheEndEntrysOkEnd) {
  Stream s(kSpan);
  s.tick(15.0);  // the span has not started: no deadline yet
  s.start("drive", 16.0);
  s.end("drive", 20.0);
  s.start("back", 20.0);
  s.end("back", 24.0);
  const auto r = s.result("span");
  ASSERT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(s.metric("span", "duration_s"), 8.0);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 24.0);
}

TEST(MissionTime, FailsWhenTheEndEntryEndsWithAnotherStatus) {
  Stream s(kSpan);
  s.start("drive", 1.0);
  s.start("back", 4.0);
  s.end("back", 5.0, "aborted");
  const auto r = s.result("span");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.reason, "the span did not complete: back ended aborted");
}

TEST(MissionTime, FailsWhenTheStartEntryNeverStarts) {
  Stream s(kSpan);
  s.finish(30.0);
  const auto r = s.result("span");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.reason, "drive never started");
  EXPECT_TRUE(r.evidence["started_t_s"].is_null());
}

TEST(MissionTime, FailsWhenTheEndEntryNeverCompletes) {
  Stream s(kSpan);
  s.start("drive", 1.0);
  s.finish(5.0);
  EXPECT_EQ(s.result("span").reason, "back never completed");
}

TEST(MissionTime, PlanRefusesAnUnknownEntry) {
  auto sc = testing::load(kSpan);
  ASSERT_EQ(sc.assertions.size(), 1u);
  sc.timeline.pop_back();  // "back" gone
  PlanContext ctx{sc, {}};
  try {
    AssertionTypes::builtin().find("mission_time")->plan(sc.assertions[0], ctx);
    FAIL() << "planned";
  } catch (const PlanError& e) {
    EXPECT_EQ(e.path(), "assertions[0].end");
  }
}

// A type that waits for another assertion's verdict, to test the settling order.
class WaitsChecker : public Checker {
 public:
  using Checker::Checker;
  std::vector<std::string> depends_on() const override { return {"quick"}; }
  void on_verdict(const AssertionResult& r, SimTime t) override {
    if (r.name == "quick") resolve(r.status, "saw " + r.name, t, SimTime::zero());
  }
  void on_finish(SimTime t) override { resolve(Verdict::kFailed, "finished first", t, {}); }
};
class WaitsType : public AssertionType {
 public:
  std::string_view name() const override { return "waits"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec, const PlanContext&) const override {
    return {spec, "", nlohmann::json::object(), {}};
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<WaitsChecker>(p);
  }
};

TEST(Evaluator, DependenciesAreSettledFirstAtTheEndOfTheTimeline) {
  const auto sc = testing::load(kQuick);
  PlanContext ctx{sc, {}};
  AssertionTypes all;
  all.add(std::make_unique<WaitsType>());
  // within_time, delegated to the builtin.
  class Delegate : public AssertionType {
   public:
    std::string_view name() const override { return "within_time"; }
    PlannedAssertion plan(const scenario::AssertionSpec& s, const PlanContext& c) const override {
      return AssertionTypes::builtin().find("within_time")->plan(s, c);
    }
    std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
      return AssertionTypes::builtin().find("within_time")->checker(p);
    }
  };
  all.add(std::make_unique<Delegate>());
  std::vector<PlannedAssertion> planned;
  scenario::AssertionSpec w;
  w.name = "waiter";
  w.type = "waits";
  planned.push_back(all.find("waits")->plan(w, ctx));  // listed first on purpose
  planned.push_back(all.find("within_time")->plan(sc.assertions[0], ctx));
  std::vector<std::string> order;
  Evaluator ev(planned, all, [&](const AssertionResult& r) { order.push_back(r.name); });
  ev.finish(SimTime::zero() + seconds(10));
  ASSERT_EQ(order, (std::vector<std::string>{"quick", "waiter"}));
  EXPECT_EQ(ev.results()[0].reason, "saw quick");
  EXPECT_EQ(ev.results()[0].status, Verdict::kFailed);
}

}  // namespace
}  // namespace fieldproof::assertions
