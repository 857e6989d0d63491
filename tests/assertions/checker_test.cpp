// The checker API's helpers: field paths into decoded messages, JSON to condition values, topic
// names, merging what the observer must watch, and samples.jsonl lines of every kind.
#include "fieldproof/assertions/checker.hpp"

#include <gtest/gtest.h>

namespace fieldproof::assertions {
namespace {

using nlohmann::json;

const json kOdom = json::parse(R"({"header": {"stamp": {"sec": 3, "nsec": 5}},
  "twist": {"linear": {"x": 0.5, "y": 0}, "angular": {"z": -0.1}},
  "ranges": [1.5, 2.5, 3.5], "status": {"status": "ACTIVE"}})");

TEST(FieldAt, ReadsNestedFieldsAndIndexes) {
  ASSERT_NE(field_at(kOdom, "twist.linear.x"), nullptr);
  EXPECT_DOUBLE_EQ(field_at(kOdom, "twist.linear.x")->get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(field_at(kOdom, "ranges[2]")->get<double>(), 3.5);
  EXPECT_EQ(field_at(kOdom, "status.status")->get<std::string>(), "ACTIVE");
  EXPECT_EQ(field_at(kOdom, "header.stamp.sec")->get<int>(), 3);
}

TEST(FieldAt, SaysWhichPartIsMissing) {
  // The reason is find_field's Status (field_at is the same lookup without it).
  auto why = [](std::string_view path) { return find_field(kOdom, path).status().message(); };
  EXPECT_EQ(field_at(kOdom, "twist.linear.w"), nullptr);
  EXPECT_EQ(why("twist.linear.w"), "no field 'w' in twist.linear");
  EXPECT_EQ(field_at(kOdom, "ranges[3]"), nullptr);
  EXPECT_EQ(why("ranges[3]"), "ranges has 3 items, no [3]");
  EXPECT_EQ(field_at(kOdom, "twist[0]"), nullptr);
  EXPECT_EQ(why("twist[0]"), "twist is not a list");
  EXPECT_EQ(field_at(kOdom, ""), nullptr);
  EXPECT_EQ(field_at(kOdom, "ranges[x]"), nullptr);
  EXPECT_NE(why("ranges[x]").find("not a number"), std::string::npos) << why("ranges[x]");
}

TEST(FieldAt, FindFieldGivesTheFieldOrAStatusWithACode) {
  const Result<const nlohmann::json*> ok = find_field(kOdom, "twist.linear.x");
  ASSERT_TRUE(ok.ok());
  EXPECT_DOUBLE_EQ((*ok)->get<double>(), 0.5);
  EXPECT_EQ(find_field(kOdom, "twist.linear.w").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(find_field(kOdom, "ranges[x]").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(find_field(kOdom, "").status().code(), StatusCode::kInvalidArgument);
}

TEST(ToValue, ConvertsEveryJsonKindForConditions) {
  auto c = scenario::Condition::compile(
      "value['twist']['linear']['x'] > 0.4 and len(value['ranges']) == 3", {"value"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto r = c->holds({{"value", to_value(kOdom)}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(*r);
  EXPECT_EQ(to_value(json(nullptr)).kind(), scenario::Value::Kind::kNull);
  EXPECT_EQ(to_value(json("ACTIVE")).kind(), scenario::Value::Kind::kString);
  EXPECT_EQ(to_value(json(true)).kind(), scenario::Value::Kind::kBool);
}

TEST(TopicOf, RelativeTopicsAreUnderTheVehicle) {
  EXPECT_EQ(topic_of("ugv1", "cmd_vel"), "/model/ugv1/cmd_vel");
  EXPECT_EQ(topic_of("ugv1", "/clock"), "/clock");
  EXPECT_EQ(topic_of("", "scan"), "/scan");
}

TEST(WatchMerge, UnitesSetsAndKeepsTheLongestWindow) {
  Watch a, b;
  a.poses = {"ugv1"};
  a.rates["/model/ugv1/scan"] = seconds(5);
  b.poses = {"ugv2"};
  b.rates["/model/ugv1/scan"] = seconds(2);
  b.latencies["/model/ugv1/odometry"] = seconds(2);
  a.merge(b);
  EXPECT_EQ(a.poses, (std::set<std::string>{"ugv1", "ugv2"}));
  EXPECT_EQ(a.rates["/model/ugv1/scan"], seconds(5));
  EXPECT_EQ(a.latencies.size(), 1u);
}

TEST(SampleJson, EveryKindHasItsLine) {
  Sample s;
  s.kind = Sample::Kind::kRate;
  s.sim = SimTime::from_ns(2'500'000'000);
  s.vehicle = "ugv1";
  s.topic = "/model/ugv1/scan";
  s.hz = 9.5;
  s.window = seconds(5);
  s.messages = 48;
  const json j = s.to_json();
  EXPECT_EQ(j["kind"], "rate");
  EXPECT_DOUBLE_EQ(j["sim"].get<double>(), 2.5);
  EXPECT_EQ(j["vehicle"], "ugv1");
  EXPECT_EQ(j["messages"], 48);
  s.kind = Sample::Kind::kLifecycle;
  s.node = "ugv_nav";
  s.state = "active";
  EXPECT_EQ(s.to_json()["state"], "active");
  s.kind = Sample::Kind::kResources;
  s.process = "engine";
  s.memory_mb = 12.345;
  EXPECT_DOUBLE_EQ(s.to_json()["memory_mb"].get<double>(), 12.35);
}

// Counts what reaches it; never resolves on its own.
class CountingChecker : public Checker {
 public:
  CountingChecker(const PlannedAssertion& p, std::vector<Sample::Kind>* seen)
      : Checker(p), seen_(seen) {}
  void on_sample(const Sample& s, SimTime t) override {
    seen_->push_back(s.kind);
    note(t, s, "n", static_cast<double>(seen_->size()));
  }
  void on_finish(SimTime t) override { resolve(Verdict::kPassed, "done", t, SimTime::zero()); }

 private:
  std::vector<Sample::Kind>* seen_;
};
class CountingType : public AssertionType {
 public:
  explicit CountingType(std::vector<Sample::Kind>* seen) : seen_(seen) {}
  std::string_view name() const override { return "counting"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec, const PlanContext&) const override {
    return {spec, "", json::object(), {}};
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<CountingChecker>(p, seen_);
  }

 private:
  std::vector<Sample::Kind>* seen_;
};

TEST(EvaluatorRouting, ACheckerGetsTheKindsItsWatchAsksForAndTheClock) {
  std::vector<Sample::Kind> seen;
  AssertionTypes types;
  types.add(std::make_unique<CountingType>(&seen));
  PlannedAssertion p;
  p.spec.name = "c";
  p.spec.type = "counting";
  p.watch.poses = {"ugv1"};
  Evaluator ev({p}, types, nullptr);
  Sample s;
  for (auto kind : {Sample::Kind::kPose, Sample::Kind::kValue, Sample::Kind::kClock,
                    Sample::Kind::kContact, Sample::Kind::kRate}) {
    s.kind = kind;
    ev.on_sample(s, SimTime::zero() + seconds(1));
  }
  EXPECT_EQ(seen, (std::vector<Sample::Kind>{Sample::Kind::kPose, Sample::Kind::kClock}));
}

TEST(EvaluatorRouting, ResolvedCheckersTakeNoMoreSamplesAndSkippedOnesKeepTheirExcerpt) {
  std::vector<Sample::Kind> seen;
  AssertionTypes types;
  types.add(std::make_unique<CountingType>(&seen));
  PlannedAssertion p;
  p.spec.name = "c";
  p.spec.type = "counting";
  p.watch.values = {"/odom"};
  Evaluator ev({p}, types, nullptr);
  Sample s;
  s.kind = Sample::Kind::kValue;
  s.topic = "/odom";
  s.message = {{"x", 1}};
  ev.on_sample(s, SimTime::zero() + seconds(1));
  ev.skip_pending("interrupted", SimTime::zero() + seconds(2));
  ev.on_sample(s, SimTime::zero() + seconds(3));
  EXPECT_EQ(seen.size(), 1u);
  const AssertionResult r = ev.results()[0];
  EXPECT_EQ(r.status, Verdict::kSkipped);
  EXPECT_EQ(r.reason, "interrupted");
  ASSERT_EQ(r.evidence["excerpt"].size(), 1u);
  EXPECT_EQ(r.evidence["excerpt"][0]["topic"], "/odom");
  EXPECT_FALSE(r.evidence["excerpt"][0].contains("message"));  // the value is noted instead
  EXPECT_DOUBLE_EQ(r.evidence["excerpt"][0]["t"].get<double>(), 1.0);
}

TEST(WatchWants, ClockIsAFlagAndTheOtherKindsNonEmptySets) {
  Watch w;
  EXPECT_FALSE(w.wants(Sample::Kind::kClock));
  EXPECT_FALSE(w.wants(Sample::Kind::kLatency));
  w.clock = true;
  w.latencies["/odom"] = seconds(2);
  EXPECT_TRUE(w.wants(Sample::Kind::kClock));
  EXPECT_TRUE(w.wants(Sample::Kind::kLatency));
  Watch m;
  m.merge(w);
  EXPECT_TRUE(m.clock);
}

}  // namespace
}  // namespace fieldproof::assertions
