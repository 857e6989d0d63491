#include "fieldproof/engine/compare.hpp"

#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

namespace fieldproof::engine {
namespace {

namespace fs = std::filesystem;

std::vector<TrajectoryPoint> line(double t0, double t1, double dt, double vx, double y = 0.0) {
  std::vector<TrajectoryPoint> out;
  for (double t = t0; t <= t1 + 1e-9; t += dt) out.push_back({t, vx * t, y});
  return out;
}

TEST(CompareTest, IdenticalTrajectoriesDeviateByZero) {
  const Trajectories a = {{"ugv1", line(0, 10, 0.1, 0.5)}};
  const CompareResult r = compare_trajectories(a, a, 0.25);
  ASSERT_EQ(r.vehicles.size(), 1u);
  EXPECT_TRUE(r.within);
  EXPECT_DOUBLE_EQ(r.vehicles[0].max_m, 0.0);
  EXPECT_DOUBLE_EQ(r.vehicles[0].mean_m, 0.0);
  EXPECT_EQ(r.vehicles[0].compared, 101u);
}

TEST(CompareTest, ConstantOffsetIsMaxMeanAndFinal) {
  const Trajectories a = {{"ugv1", line(0, 10, 0.1, 0.5, 0.0)}};
  const Trajectories b = {{"ugv1", line(0, 10, 0.1, 0.5, 0.3)}};
  const CompareResult r = compare_trajectories(a, b, 0.25);
  EXPECT_FALSE(r.within);
  EXPECT_NEAR(r.vehicles[0].max_m, 0.3, 1e-9);
  EXPECT_NEAR(r.vehicles[0].mean_m, 0.3, 1e-9);
  EXPECT_NEAR(r.vehicles[0].final_m, 0.3, 1e-9);
  EXPECT_TRUE(compare_trajectories(a, b, 0.31).within);
}

TEST(CompareTest, SecondRunIsInterpolatedAtFirstRunsTimes) {
  // b sampled at 1 s, a at 0.1 s, same straight line: interpolation gives no deviation.
  const Trajectories a = {{"ugv1", line(0, 10, 0.1, 0.5)}};
  const Trajectories b = {{"ugv1", line(0, 10, 1.0, 0.5)}};
  const CompareResult r = compare_trajectories(a, b, 1e-6);
  EXPECT_TRUE(r.within);
  EXPECT_NEAR(r.vehicles[0].max_m, 0.0, 1e-9);
}

TEST(CompareTest, InterpolateIsLinearBetweenSamples) {
  const std::vector<TrajectoryPoint> tr = {{0, 0, 0}, {2, 4, -2}};
  const TrajectoryPoint p = interpolate(tr, 0.5);
  EXPECT_DOUBLE_EQ(p.x, 1.0);
  EXPECT_DOUBLE_EQ(p.y, -0.5);
}

TEST(CompareTest, LargestDeviationIsReportedWithItsTime) {
  std::vector<TrajectoryPoint> b = line(0, 10, 0.1, 0.5);
  for (auto& p : b) {
    if (std::abs(p.t - 4.0) < 1e-6) p.y = 1.0;
  }
  const Trajectories a = {{"ugv1", line(0, 10, 0.1, 0.5)}};
  const CompareResult r = compare_trajectories(a, {{"ugv1", b}}, 0.25);
  EXPECT_NEAR(r.vehicles[0].max_m, 1.0, 1e-9);
  EXPECT_NEAR(r.vehicles[0].max_t_s, 4.0, 1e-6);
  EXPECT_NEAR(r.vehicles[0].final_m, 0.0, 1e-9);
}

TEST(CompareTest, OnlyTheCommonSpanIsCompared) {
  const Trajectories a = {{"ugv1", line(0, 10, 0.5, 0.5)}};
  const Trajectories b = {{"ugv1", line(5, 20, 0.5, 0.5)}};
  const CompareResult r = compare_trajectories(a, b, 0.01);
  EXPECT_EQ(r.vehicles[0].compared, 11u);  // 5.0 .. 10.0
  EXPECT_NEAR(r.vehicles[0].final_t_s, 10.0, 1e-9);
  EXPECT_NEAR(r.vehicles[0].max_m, 0.0, 1e-9);
  // The spans differ by 10 s: not within, unless that much is allowed.
  EXPECT_FALSE(r.within);
  EXPECT_TRUE(compare_trajectories(a, b, 0.01, 10.0).within);
}

// A run that ended early against a full one: the same path as far as it goes,
// but not the same run; the text says by how much the spans differ.
TEST(CompareTest, ARunThatEndedEarlyIsOutAndTheTextSaysByHowMuch) {
  const Trajectories full = {{"ugv1", line(0, 10, 0.1, 0.5)}};
  const Trajectories early = {{"ugv1", line(0, 2.5, 0.1, 0.5)}};
  const CompareResult r = compare_trajectories(full, early, 0.25);
  EXPECT_FALSE(r.within);
  EXPECT_NEAR(r.vehicles[0].max_m, 0.0, 1e-9);
  EXPECT_NEAR(r.vehicles[0].span_diff_s, 7.5, 1e-9);
  const std::string text = r.to_text();
  EXPECT_NE(text.find("the first 0.00..10.00 s, the second 0.00..2.50 s (7.50 s apart; the "
                      "second is 7.50 s shorter)  OUT"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("DIFFERENT"), std::string::npos) << text;
  EXPECT_FALSE(r.to_json()["vehicles"][0]["span_within"].get<bool>());
}

TEST(CompareTest, SpansWithinASamplePeriodAreTheSame) {
  const Trajectories a = {{"ugv1", line(0, 10, 0.1, 0.5)}};
  const Trajectories b = {{"ugv1", line(0, 10.1, 0.1, 0.5)}};  // one more sample
  EXPECT_TRUE(compare_trajectories(a, b, 0.25).within);
}

TEST(CompareTest, VehicleMissingFromSecondRunIsNotWithin) {
  const Trajectories a = {{"ugv1", line(0, 1, 0.5, 1)}, {"ugv2", line(0, 1, 0.5, 1)}};
  const Trajectories b = {{"ugv1", line(0, 1, 0.5, 1)}};
  const CompareResult r = compare_trajectories(a, b, 0.25);
  EXPECT_FALSE(r.within);
  EXPECT_EQ(r.vehicles[1].vehicle, "ugv2");
  EXPECT_FALSE(r.vehicles[1].note.empty());
  EXPECT_FALSE(r.to_json()["within"].get<bool>());
}

TEST(CompareTest, DisjointSpansAreNotWithin) {
  const Trajectories a = {{"ugv1", line(0, 1, 0.5, 1)}};
  const Trajectories b = {{"ugv1", line(2, 3, 0.5, 1)}};
  EXPECT_FALSE(compare_trajectories(a, b, 100).within);
}

class CompareFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fieldproof_compare_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CompareFilesTest, LoadsPoseSamplesRelativeToTheOrigin) {
  std::ofstream(dir_ / "run.json") << R"({"run_id": "a", "status": "passed", "clock": {"origin_sim_s": 2.0}})";
  std::ofstream(dir_ / "samples.jsonl")
      << R"({"kind":"pose","sim":2.5,"model":"ugv1","x":1,"y":2,"yaw":0})"
         "\n"
      << R"({"kind":"clock","sim":3.0,"wall_s":1,"rtf":1})"
         "\n"
      << "not json\n"
      << R"({"kind":"pose","sim":2.0,"model":"ugv1","x":0,"y":0,"yaw":0})"
         "\n";
  const Trajectories t = load_trajectories(dir_).value();
  ASSERT_EQ(t.at("ugv1").size(), 2u);
  EXPECT_DOUBLE_EQ(t.at("ugv1")[0].t, 0.0);
  EXPECT_DOUBLE_EQ(t.at("ugv1")[1].t, 0.5);
  EXPECT_DOUBLE_EQ(t.at("ugv1")[1].y, 2.0);
}

// A watched static model (a crate) has pose samples too; only the run's vehicles are compared.
TEST_F(CompareFilesTest, LoadsOnlyTheVehiclesRunJsonLists) {
  std::ofstream(dir_ / "run.json") << R"({"run_id": "a", "status": "passed", "vehicles": [{"name": "ugv1"}]})";
  std::ofstream(dir_ / "samples.jsonl")
      << R"({"kind":"pose","sim":0.0,"model":"ugv1","x":0,"y":0,"yaw":0})"
         "\n"
      << R"({"kind":"pose","sim":0.0,"model":"crate","x":3,"y":1,"yaw":0})"
         "\n";
  const Trajectories t = load_trajectories(dir_).value();
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.count("ugv1"), 1u);
  EXPECT_EQ(t.count("crate"), 0u);
}

TEST_F(CompareFilesTest, MissingRunDirectoryIsAnError) {
  const Result<Trajectories> t = load_trajectories(dir_ / "nope");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(t.status().message(), (dir_ / "nope").string() + ": no such run directory");
}

TEST_F(CompareFilesTest, RunWithoutPoseSamplesIsAnError) {
  std::ofstream(dir_ / "samples.jsonl") << R"({"kind":"clock","sim":1})"
                                           "\n";
  const Result<Trajectories> t = load_trajectories(dir_);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            (dir_ / "samples.jsonl").string() + ": no ground-truth pose samples");
}

}  // namespace
}  // namespace fieldproof::engine
