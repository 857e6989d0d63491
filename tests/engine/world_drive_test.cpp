// `fieldproof world`'s logic without the CLI: a request's text turned into drive options (spawns,
// goal, limit, model-derived stack parameters) and the refusals, with the exit code each gets.
#include "fieldproof/engine/world_drive.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace fieldproof::engine {
namespace {

StackSpec reference_like() {
  StackSpec s;
  s.kind = StackSpec::Kind::kPlugin;
  s.plugin = "/nowhere/libstack.so";
  s.params_json = "{}";
  return s;
}

WorldDriveRequest request(std::vector<std::string> spawns) {
  WorldDriveRequest r;
  r.world = "depot.sdf";
  r.spawns = std::move(spawns);
  r.base_dir = ".";
  return r;
}

TEST(WorldDriveOptions, SpawnsAtAFrameOrAPoseWithTheYawDefaultingToZero) {
  WorldDriveRequest r = request({"ugv1@dock", "ugv2@2.5,-1,1.57", "ugv3@-3,4"});
  r.seed = 7;
  r.max_rtf = 2.5;
  const Result<WorldDriveOptions> o = world_drive_options(r, reference_like());
  ASSERT_TRUE(o.ok()) << o.status().message();
  ASSERT_EQ(o->session.vehicles.size(), 3u);
  EXPECT_EQ(o->session.vehicles[0].name, "ugv1");
  EXPECT_EQ(o->session.vehicles[0].frame, "dock");
  EXPECT_EQ(o->session.vehicles[1].name, "ugv2");
  ASSERT_TRUE(o->session.vehicles[1].pose.has_value());
  EXPECT_DOUBLE_EQ(o->session.vehicles[1].pose->x, 2.5);
  EXPECT_DOUBLE_EQ(o->session.vehicles[1].pose->y, -1.0);
  EXPECT_DOUBLE_EQ(o->session.vehicles[1].pose->yaw, 1.57);
  ASSERT_TRUE(o->session.vehicles[2].pose.has_value());
  EXPECT_DOUBLE_EQ(o->session.vehicles[2].pose->yaw, 0.0);
  EXPECT_EQ(o->session.seed, 7u);
  EXPECT_DOUBLE_EQ(o->session.max_rtf, 2.5);
  EXPECT_EQ(o->session.world_file, "depot.sdf");
  EXPECT_EQ(o->until, SimTime::from_ns(60'000'000'000));
  // Without an explicit model the stack keeps its own parameters.
  EXPECT_EQ(o->session.vehicles[0].stack.params_json, "{}");
}

TEST(WorldDriveOptions, ABadSpawnIsRefusedNamingIt) {
  for (const std::string s : {"ugv1", "@dock", "ugv1@", "ugv1@1,2,3,4", "ugv1@1,x", "ugv1@ 1,2"}) {
    const Result<WorldDriveOptions> o = world_drive_options(request({s}), reference_like());
    ASSERT_FALSE(o.ok()) << s;
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(o.status().message().find("--spawn '" + s + "': expected NAME@FRAME"),
              std::string::npos)
        << o.status().message();
  }
}

TEST(WorldDriveOptions, AGoalIsAFrameOrAPose) {
  WorldDriveRequest r = request({"ugv1@dock"});
  r.goal = "goal_a";
  Result<WorldDriveOptions> o = world_drive_options(r, reference_like());
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->goal_frame, "goal_a");
  EXPECT_FALSE(o->goal.has_value());
  r.goal = "4,-2";
  o = world_drive_options(r, reference_like());
  ASSERT_TRUE(o.ok());
  ASSERT_TRUE(o->goal.has_value());
  EXPECT_DOUBLE_EQ(o->goal->x, 4.0);
  EXPECT_DOUBLE_EQ(o->goal->y, -2.0);
  r.goal = "4,,2";
  o = world_drive_options(r, reference_like());
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("--goal '4,,2': expected X,Y[,YAW]"), std::string::npos);
}

TEST(WorldDriveOptions, TheLimitMustBeAPositiveDuration) {
  WorldDriveRequest r = request({"ugv1@dock"});
  r.until = "1.5s";
  Result<WorldDriveOptions> o = world_drive_options(r, reference_like());
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->until, SimTime::from_ns(1'500'000'000));
  r.until = "0s";
  o = world_drive_options(r, reference_like());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().message(), "--until '0s': must be > 0");
  r.until = "soon";
  o = world_drive_options(r, reference_like());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().message().rfind("--until 'soon': ", 0), 0u) << o.status().message();
}

TEST(WorldDriveOptions, SeedRateAndSpawnsAreCheckedFirst) {
  WorldDriveRequest r = request({"ugv1@dock"});
  r.seed = -1;
  EXPECT_EQ(world_drive_options(r, reference_like()).status().message(),
            "--seed must be between 0 and 2^31-1");
  r.seed = 2147483648;
  EXPECT_FALSE(world_drive_options(r, reference_like()).ok());
  r.seed = 0;
  r.max_rtf = std::nan("");
  EXPECT_EQ(world_drive_options(r, reference_like()).status().message(),
            "--max-rtf must be >= 0 (0 = unpaced)");
  EXPECT_EQ(world_drive_options(request({}), reference_like()).status().message(),
            "give at least one --spawn NAME@FRAME or NAME@X,Y[,YAW]");
}

TEST(WorldDriveOptions, AnExplicitModelSetsTheStacksFootprintAndCappedLimits) {
  WorldDriveRequest r = request({"ugv1@dock"});
  r.model = "ugv";
  std::vector<std::string> warnings;
  r.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  const Result<WorldDriveOptions> o = world_drive_options(r, reference_like());
  ASSERT_TRUE(o.ok()) << o.status().message();
  const world::VehicleParams& p = o->session.vehicles[0].params;
  const std::string& json = o->session.vehicles[0].stack.params_json;
  char radius[64];
  std::snprintf(radius, sizeof radius, "\"robot_radius\":%.17g",
                std::hypot(p.length / 2, p.width / 2));
  EXPECT_NE(json.find(radius), std::string::npos) << json;
  char linear[64];
  std::snprintf(linear, sizeof linear, "\"max_linear\":%.17g", std::min(0.5, p.max_linear));
  EXPECT_NE(json.find(linear), std::string::npos) << json;
  EXPECT_NE(json.find("\"max_angular\":"), std::string::npos) << json;
}

TEST(WorldDriveOptions, AModelThatCannotBeReadIsRefusedOneLinePerError) {
  WorldDriveRequest r = request({"ugv1@dock"});
  r.model = "no_such_model_anywhere";
  const Result<WorldDriveOptions> o = world_drive_options(r, reference_like());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().message().rfind("--model: ", 0), 0u) << o.status().message();
}

TEST(DriveWorldRequest, ARefusedRequestSaysWhyWithTheCommandsExitCode) {
  WorldDriveRequest r = request({"ugv1@dock"});
  r.stack_plugin = "/nowhere/no_such_stack.so";
  WorldDriveResult d = drive_world(r);
  EXPECT_TRUE(d.refused);
  EXPECT_EQ(d.exit_code, 1);  // a stack that cannot be resolved
  EXPECT_FALSE(d.error.empty());
  r.seed = -5;  // bad input is found before the stack
  d = drive_world(r);
  EXPECT_TRUE(d.refused);
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_EQ(d.error, "--seed must be between 0 and 2^31-1");
  EXPECT_TRUE(d.vehicles.empty());
}

}  // namespace
}  // namespace fieldproof::engine
