// The in-process plugin through its C ABI, loaded with dlopen into a program that itself links
// the generated fieldproof.msgs classes (a second copy in the plugin would abort at load).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/stacks/plugin_api.hpp"
#include "stacks/stack_test_util.hpp"

namespace fieldproof::stacks {
namespace {

struct Out {
  std::string topic;
  int64_t stamp_ns;
  std::string type;
  std::string payload;
};

void collect(void* user, const char* topic, int64_t stamp_ns, const char* type, const char* payload,
             size_t size) {
  static_cast<std::vector<Out>*>(user)->push_back({topic, stamp_ns, type, {payload, size}});
}

int64_t fake_wall(void* user) { return *static_cast<int64_t*>(user); }

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    so_ = dlopen(FIELDPROOF_UGV_NAV_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(so_, nullptr) << dlerror();
    create_ =
        reinterpret_cast<fieldproof_stack_create_fn>(dlsym(so_, FIELDPROOF_STACK_CREATE_SYMBOL));
    ASSERT_NE(create_, nullptr);
    grid_ = testing::free_grid(120, 80, 0.1);
    testing::add_border(grid_);
    testing::fill_rect(grid_, 5.5, 0.0, 6.5, 5.0);
    map_ = {grid_.resolution, grid_.origin_x, grid_.origin_y,
            grid_.width,      grid_.height,   grid_.cells.data()};
  }
  void TearDown() override {
    if (so_) dlclose(so_);
  }

  fieldproof_stack_v1* make(const char* params = "{}") {
    char err[256] = {};
    fieldproof_stack_v1* s = create_("ugv1", params, &map_, err, sizeof err);
    EXPECT_NE(s, nullptr) << err;
    if (s) {
      EXPECT_EQ(s->set_wall_clock(s, fake_wall, &wall_ns_), 0);
    }
    return s;
  }

  void* so_ = nullptr;
  fieldproof_stack_create_fn create_ = nullptr;
  world::OccupancyGrid grid_;
  fieldproof_grid_v1 map_{};
  int64_t wall_ns_ = 1'000'000'000;
};

TEST_F(PluginTest, ExportsTheV1AbiAndTheVehiclesTopics) {
  fieldproof_stack_v1* s = make();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->abi_version, FIELDPROOF_STACK_ABI_VERSION);
  EXPECT_EQ(s->struct_size, sizeof(fieldproof_stack_v1));
  ASSERT_EQ(s->subscription_count(s), 4u);
  EXPECT_STREQ(s->subscription(s, 0), "/model/ugv1/odometry");
  EXPECT_STREQ(s->subscription(s, 2), "/model/ugv1/navigate_to_pose/goal");
  EXPECT_STREQ(s->subscription(s, 3), "/model/ugv1/link_state");
  EXPECT_EQ(s->subscription(s, 4), nullptr);
  s->destroy(s);
}

TEST_F(PluginTest, DrivesAUnicycleAroundTheObstacleToTheGoal) {
  fieldproof_stack_v1* s = make(R"({"controller":{"max_linear":0.6}})");
  ASSERT_NE(s, nullptr);
  Pose2D pose{2.0, 2.0, 0.0};
  CmdVel cmd;
  std::vector<Out> out;
  std::optional<msgs::NavStatus> final_status;
  const std::string goal = msgs::encode(msgs::NavGoal{"g1", 10.0, 2.0, 0.0});
  for (int64_t t = 0; t < 120'000'000'000 && !final_status; t += 10'000'000) {
    ignition::msgs::Odometry odom;
    msgs::set_planar_pose(odom.mutable_pose(), pose.x, pose.y, pose.yaw);
    const std::string p = msgs::serialize(odom);
    ASSERT_EQ(
        s->deliver(s, "/model/ugv1/odometry", t, "ignition.msgs.Odometry", p.data(), p.size()), 0)
        << s->last_error(s);
    if (t == 500'000'000) {
      ASSERT_EQ(s->deliver(s, "/model/ugv1/navigate_to_pose/goal", t, "", goal.data(), goal.size()),
                0);
    }
    if (t >= s->next_tick_ns(s)) {
      ASSERT_EQ(s->tick(s, t), 0);
    }
    out.clear();
    s->drain(s, collect, &out);
    for (const Out& o : out) {
      if (o.topic == "/model/ugv1/cmd_vel") {
        const auto tw = msgs::parse<ignition::msgs::Twist>(o.payload);
        ASSERT_TRUE(tw.has_value());
        cmd = {tw->linear().x(), tw->angular().z()};
      } else if (o.topic == "/model/ugv1/navigate_to_pose/status") {
        const auto st = msgs::decode_nav_status(o.payload);
        ASSERT_TRUE(st.has_value());
        if (st->status != msgs::NavStatusCode::kAccepted) final_status = st;
      }
    }
    pose = testing::integrate(pose, cmd, milliseconds(10));
    wall_ns_ += 10'000'000;
  }
  ASSERT_TRUE(final_status.has_value());
  EXPECT_EQ(final_status->status, msgs::NavStatusCode::kSucceeded) << final_status->reason;
  EXPECT_LT(std::hypot(pose.x - 10.0, pose.y - 2.0), 0.2);
  EXPECT_GT(wall_ns_, 20'000'000'000);  // it did drive: ~19 m at <= 0.6 m/s
  s->destroy(s);
}

TEST_F(PluginTest, WallSilenceAbortsThroughCheckWall) {
  fieldproof_stack_v1* s = make();
  ASSERT_NE(s, nullptr);
  ignition::msgs::Odometry odom;
  msgs::set_planar_pose(odom.mutable_pose(), 2.0, 2.0, 0.0);
  const std::string p = msgs::serialize(odom);
  const std::string goal = msgs::encode(msgs::NavGoal{"g1", 10.0, 2.0, 0.0});
  ASSERT_EQ(s->tick(s, 0), 0);
  ASSERT_EQ(s->deliver(s, "/model/ugv1/odometry", 0, "", p.data(), p.size()), 0);
  ASSERT_EQ(s->deliver(s, "/model/ugv1/navigate_to_pose/goal", 0, "", goal.data(), goal.size()), 0);
  ASSERT_EQ(s->tick(s, 50'000'000), 0);
  std::vector<Out> out;
  s->drain(s, collect, &out);
  out.clear();
  wall_ns_ += 4'000'000'000;
  ASSERT_EQ(s->check_wall(s), 0);
  s->drain(s, collect, &out);
  bool aborted = false;
  int inactive = 0;
  for (const Out& o : out) {
    EXPECT_EQ(o.stamp_ns, 50'000'000);
    if (o.topic == "/model/ugv1/navigate_to_pose/status") {
      aborted = msgs::decode_nav_status(o.payload)->status == msgs::NavStatusCode::kAborted;
    }
    if (o.topic == "/model/ugv1/lifecycle") {
      inactive += msgs::decode_lifecycle(o.payload)->state == msgs::LifecycleStateCode::kInactive;
    }
  }
  EXPECT_TRUE(aborted);
  EXPECT_EQ(inactive, 3);
  s->destroy(s);
}

TEST_F(PluginTest, BadInputIsAnErrorNeverACrash) {
  char err[256] = {};
  EXPECT_EQ(create_("ugv1", R"({"nope":1})", &map_, err, sizeof err), nullptr);
  EXPECT_NE(std::string(err).find("unknown key 'nope'"), std::string::npos) << err;
  EXPECT_EQ(create_("ugv1", "{}", nullptr, err, sizeof err), nullptr);
  EXPECT_NE(std::string(err).find("no static map"), std::string::npos) << err;
  EXPECT_EQ(create_("", "{}", &map_, err, sizeof err), nullptr);
  EXPECT_EQ(create_(nullptr, nullptr, &map_, nullptr, 0), nullptr);
  fieldproof_stack_v1* s = make();
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->deliver(s, "/model/ugv1/scan", 0, "", "\xff\xff", 2), 0);
  EXPECT_NE(std::string(s->last_error(s)).find("LaserScan"), std::string::npos);
  EXPECT_NE(s->deliver(s, "/other", 0, "", "", 0), 0);
  EXPECT_NE(s->deliver(s, nullptr, 0, "", "", 0), 0);
  EXPECT_NE(s->set_wall_clock(s, nullptr, nullptr), 0);
  s->destroy(s);
}

TEST_F(PluginTest, ShutdownAbortsTheActiveGoal) {
  fieldproof_stack_v1* s = make();
  ASSERT_NE(s, nullptr);
  const std::string goal = msgs::encode(msgs::NavGoal{"g1", 10.0, 2.0, 0.0});
  ASSERT_EQ(s->tick(s, 0), 0);
  ASSERT_EQ(s->deliver(s, "/model/ugv1/navigate_to_pose/goal", 0, "", goal.data(), goal.size()), 0);
  ASSERT_EQ(s->shutdown(s, 100, "engine ending"), 0);
  std::vector<Out> out;
  s->drain(s, collect, &out);
  ASSERT_FALSE(out.empty());
  std::optional<msgs::NavStatus> last;
  for (const Out& o : out) {
    if (o.topic == "/model/ugv1/navigate_to_pose/status") last = msgs::decode_nav_status(o.payload);
  }
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->status, msgs::NavStatusCode::kAborted);
  EXPECT_NE(last->reason.find("engine ending"), std::string::npos);
  s->destroy(s);
}

}  // namespace
}  // namespace fieldproof::stacks
