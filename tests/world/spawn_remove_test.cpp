// Spawn and remove over the bus (/world/<w>/create, /world/<w>/remove), directly and through the
// lock-step glue, and WorldParticipant::post.
#include <gtest/gtest.h>
#include <ignition/msgs/entity.pb.h>
#include <ignition/msgs/entity_factory.pb.h>

#include <atomic>
#include <cmath>
#include <numbers>
#include <thread>

#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/world/world_participant.hpp"
#include "world_test_util.hpp"

namespace fieldproof::world {
namespace {

using lockstep::InProcessCoordinator;
using lockstep::Participant;
using lockstep::ParticipantOptions;
using lockstep::Publish;
using testing::on_topic;

constexpr const char* kCreate = "/world/flat/create";
constexpr const char* kRemove = "/world/flat/remove";

SimTime at_ms(int64_t ms) { return SimTime::from_ns(ms * 1'000'000); }

std::string factory(const std::string& name, const std::string& sdf,
                    const std::string& sdf_filename = "",
                    std::optional<Pose2D> pose = std::nullopt) {
  ignition::msgs::EntityFactory f;
  f.set_name(name);
  if (!sdf_filename.empty()) f.set_sdf_filename(sdf_filename);
  if (!sdf.empty()) f.set_sdf(sdf);
  if (pose) msgs::set_planar_pose(f.mutable_pose(), pose->x, pose->y, pose->yaw);
  return msgs::serialize(f);
}

std::string entity(const std::string& name) {
  ignition::msgs::Entity e;
  e.set_name(name);
  e.set_type(ignition::msgs::Entity::MODEL);
  return msgs::serialize(e);
}

std::string twist(double v, double w) {
  ignition::msgs::Twist t;
  t.mutable_linear()->set_x(v);
  t.mutable_angular()->set_z(w);
  return msgs::serialize(t);
}

std::string box_sdf(const std::string& model, double sx, double sy) {
  return "<?xml version=\"1.0\"?>\n<sdf version=\"1.8\">\n<model name=\"" + model +
         "\">\n<static>true</static>\n<link name=\"link\">\n<collision name=\"c\">\n"
         "<pose>0 0 0.5 0 0 0</pose>\n<geometry><box><size>" +
         std::to_string(sx) + " " + std::to_string(sy) +
         " 1</size></box></geometry>\n</collision>\n</link>\n</model>\n</sdf>\n";
}

Status create(World& w, const std::string& payload) {
  return w.handle_message(kCreate, msgs::kEntityFactory, payload);
}
Status remove_model(World& w, const std::string& name) {
  return w.handle_message(kRemove, msgs::kEntity, entity(name));
}

// The range of the ray straight ahead (index rays/2: angle_min is -pi) in the last scan.
double ahead(const std::vector<WorldMessage>& ms, const std::string& vehicle) {
  const auto scans = on_topic(ms, "/model/" + vehicle + "/scan");
  EXPECT_FALSE(scans.empty());
  if (scans.empty()) return std::nan("");
  auto scan = msgs::parse<ignition::msgs::LaserScan>(scans.back().payload);
  return scan->ranges(scan->ranges_size() / 2);
}

std::unique_ptr<World> flat(std::vector<std::string>* warnings = nullptr) {
  WorldOptions o;
  if (warnings) o.on_warning = [warnings](const std::string& m) { warnings->push_back(m); };
  return World::empty("flat", milliseconds(1), std::move(o));
}

TEST(SpawnOverTheBus, InputTopicsOfferCreateAndRemove) {
  auto w = flat();
  const Status s0 = create(*w, factory("ugv1", ""));
  ASSERT_TRUE(s0.ok()) << s0.message();
  const auto topics = w->input_topics();
  ASSERT_EQ(topics.size(), 4u);
  EXPECT_EQ(topics[0], "/world/flat/control");
  EXPECT_EQ(topics[1], kCreate);
  EXPECT_EQ(topics[2], kRemove);
  EXPECT_EQ(topics[3], "/model/ugv1/cmd_vel");
}

TEST(SpawnOverTheBus, AUgvIsSpawnedAtThePoseAndDrivenByCmdVel) {
  auto w = flat();
  ASSERT_TRUE(create(*w, factory("ugv1", "", "ugv", Pose2D{1.0, 2.0, std::numbers::pi / 2})).ok());
  const auto v = w->vehicle("ugv1");
  ASSERT_TRUE(v);
  EXPECT_NEAR(v->pose.x, 1.0, 1e-12);
  EXPECT_NEAR(v->pose.y, 2.0, 1e-12);
  EXPECT_NEAR(v->pose.yaw, std::numbers::pi / 2, 1e-9);
  ASSERT_TRUE(w->handle_message("/model/ugv1/cmd_vel", msgs::kTwist, twist(1.0, 0.0)).ok());
  w->step_n(2000);
  // 1 s ramp at 1 m/s² (0.5 m), then 1 s at 1 m/s, heading +y.
  EXPECT_NEAR(w->vehicle("ugv1")->pose.y, 3.5, 0.002);
  EXPECT_NEAR(w->vehicle("ugv1")->pose.x, 1.0, 1e-9);
  EXPECT_FALSE(on_topic(w->take_messages(), "/model/ugv1/scan").empty());
}

TEST(SpawnOverTheBus, AnIncludeOfTheUgvGivesItsNameAndPose) {
  auto w = flat();
  ASSERT_TRUE(create(*w, factory("",
                                 "<sdf version=\"1.8\"><include><uri>model://ugv</uri>"
                                 "<name>rover</name><pose>0 5 0 0 0 0.5</pose></include>"
                                 "</sdf>"))
                  .ok());
  const auto v = w->vehicle("rover");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->pose.y, 5.0);
  EXPECT_EQ(v->pose.yaw, 0.5);
  // The factory's name and pose win over the include's.
  ASSERT_TRUE(create(*w, factory("r2", "<include><uri>ugv</uri><name>x</name></include>", "",
                                 Pose2D{-3.0, 0.0, 0.0}))
                  .ok());
  ASSERT_TRUE(w->vehicle("r2"));
  EXPECT_EQ(w->vehicle("r2")->pose.x, -3.0);
  EXPECT_FALSE(w->vehicle("x"));
}

TEST(SpawnOverTheBus, AStaticBoxIsSeenByTheLidarThenRemovedIsGone) {
  auto w = flat();
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, testing::ideal_ugv()).ok());
  w->step_n(100);
  EXPECT_TRUE(std::isinf(ahead(w->take_messages(), "ugv1")));
  // A 1 m box centred 3 m ahead: its near face at 2.5 m.
  ASSERT_TRUE(
      create(*w, factory("crate", box_sdf("box", 1.0, 1.0), "", Pose2D{3.0, 0.0, 0.0})).ok());
  EXPECT_EQ(w->static_models(), std::vector<std::string>{"crate"});
  ASSERT_EQ(w->static_shapes().size(), 1u);
  EXPECT_EQ(scoped_name(w->static_shapes()[0]), "crate::link::c");
  w->step_n(100);
  auto ms = w->take_messages();
  EXPECT_NEAR(ahead(ms, "ugv1"), 2.5, 1e-9);
  const auto poses = on_topic(ms, "/world/flat/pose/info");
  ASSERT_FALSE(poses.empty());
  auto pv = msgs::parse<ignition::msgs::Pose_V>(poses.back().payload);
  ASSERT_EQ(pv->pose_size(), 2);
  EXPECT_EQ(pv->pose(1).name(), "crate");
  EXPECT_EQ(pv->pose(1).position().x(), 3.0);

  ASSERT_TRUE(remove_model(*w, "crate").ok());
  EXPECT_TRUE(w->static_models().empty());
  w->step_n(100);
  ms = w->take_messages();
  EXPECT_TRUE(std::isinf(ahead(ms, "ugv1")));
  pv = msgs::parse<ignition::msgs::Pose_V>(on_topic(ms, "/world/flat/pose/info").back().payload);
  EXPECT_EQ(pv->pose_size(), 1);
}

TEST(SpawnOverTheBus, CylinderAndSphereAtTheSdfPoseOrRelativeToAFrame) {
  LoadResult r = World::load_string(R"(<?xml version="1.0"?>
<sdf version="1.8"><world name="flat">
  <frame name="bay"><pose>10 0 0 0 0 1.5707963267948966</pose></frame>
</world></sdf>)");
  ASSERT_TRUE(r.world) << (r.errors.empty() ? "" : r.errors[0]);
  World& w = *r.world;
  const std::string cyl = R"(<model name="post"><static>true</static><pose>0 4 0 0 0 0</pose>
    <link name="l"><collision name="c"><pose>0 0 0.5 0 0 0</pose>
      <geometry><cylinder><radius>0.25</radius><length>1</length></cylinder></geometry>
    </collision></link></model>)";
  ASSERT_TRUE(create(w, factory("", cyl)).ok());  // no <sdf> root, the model's own name and pose
  ASSERT_EQ(w.static_shapes().size(), 1u);
  EXPECT_EQ(w.static_shapes()[0].type, ShapeType::kCylinder);
  EXPECT_EQ(w.static_shapes()[0].model, "post");
  EXPECT_NEAR(w.static_shapes()[0].pose.y, 4.0, 1e-12);
  EXPECT_EQ(w.static_shapes()[0].radius, 0.25);

  ignition::msgs::EntityFactory f;
  f.set_name("ball");
  f.set_sdf(R"(<sdf version="1.8"><model name="m"><static>true</static><link name="l">
    <collision name="c"><pose>0 0 0.3 0 0 0</pose><geometry><sphere><radius>0.3</radius>
    </sphere></geometry></collision></link></model></sdf>)");
  msgs::set_planar_pose(f.mutable_pose(), 2.0, 0.0, 0.0);
  f.set_relative_to("bay");
  ASSERT_TRUE(create(w, msgs::serialize(f)).ok());
  ASSERT_EQ(w.static_shapes().size(), 2u);
  EXPECT_EQ(w.static_shapes()[1].type, ShapeType::kSphere);
  EXPECT_NEAR(w.static_shapes()[1].pose.x, 10.0, 1e-9);  // 2 m along the bay's +y
  EXPECT_NEAR(w.static_shapes()[1].pose.y, 2.0, 1e-9);
}

TEST(SpawnOverTheBus, RemovingAVehicleStopsItsTopics) {
  auto w = flat();
  ASSERT_TRUE(create(*w, factory("ugv1", "", "", Pose2D{})).ok());
  w->step_n(200);
  auto ms = w->take_messages();
  EXPECT_FALSE(on_topic(ms, "/model/ugv1/scan").empty());
  EXPECT_FALSE(on_topic(ms, "/model/ugv1/odometry").empty());
  ASSERT_TRUE(remove_model(*w, "ugv1").ok());
  EXPECT_TRUE(w->vehicles().empty());
  EXPECT_EQ(w->input_topics().size(), 3u);
  w->step_n(500);
  ms = w->take_messages();
  for (const auto& m : ms) EXPECT_EQ(m.topic.find("/model/ugv1/"), std::string::npos) << m.topic;
  auto pv =
      msgs::parse<ignition::msgs::Pose_V>(on_topic(ms, "/world/flat/pose/info").back().payload);
  EXPECT_EQ(pv->pose_size(), 0);
  // cmd_vel to it is now an error (no such vehicle).
  EXPECT_FALSE(w->handle_message("/model/ugv1/cmd_vel", msgs::kTwist, twist(1, 0)).ok());
}

// Every refusal: a clear message, counted and logged, nothing changed, no NaN.
TEST(SpawnOverTheBus, RefusalsSayWhyAndChangeNothing) {
  std::vector<std::string> warnings;
  auto w = flat(&warnings);
  ASSERT_TRUE(
      create(*w, factory("crate", box_sdf("box", 1.0, 1.0), "", Pose2D{3.0, 0.0, 0.0})).ok());
  ASSERT_TRUE(create(*w, factory("ugv1", "", "ugv", Pose2D{})).ok());
  const double nan = std::nan("");
  ignition::msgs::EntityFactory nan_pose;
  nan_pose.set_name("ugv9");
  nan_pose.set_sdf_filename("ugv");
  msgs::set_planar_pose(nan_pose.mutable_pose(), nan, 0.0, 0.0);
  ignition::msgs::EntityFactory nan_quat;
  nan_quat.set_name("box9");
  nan_quat.set_sdf(box_sdf("b", 1, 1));
  msgs::set_planar_pose(nan_quat.mutable_pose(), 8.0, 0.0, 0.0);
  nan_quat.mutable_pose()->mutable_orientation()->set_w(nan);
  const std::string mesh = R"(<sdf version="1.8"><model name="m"><static>true</static>
<link name="l"><collision name="c"><geometry><mesh><uri>x.dae</uri></mesh></geometry>
</collision></link></model></sdf>)";
  struct Case {
    const char* what;
    std::string topic, type, payload;
    const char* expect;  // in the message
  };
  const Case cases[] = {
      {"inside an obstacle", kCreate, std::string(msgs::kEntityFactory),
       factory("ugv2", "", "ugv", Pose2D{3.0, 0.2, 0.0}), "overlap crate::link::c"},
      {"duplicate UGV name", kCreate, std::string(msgs::kEntityFactory),
       factory("ugv1", "", "ugv", Pose2D{-5.0, 0.0, 0.0}), "taken"},
      {"duplicate static name", kCreate, std::string(msgs::kEntityFactory),
       factory("crate", box_sdf("b", 1, 1), "", Pose2D{-5.0, 5.0, 0.0}), "taken"},
      {"unknown name", kRemove, std::string(msgs::kEntity), entity("nobody"), "no such model"},
      {"remove without a name", kRemove, std::string(msgs::kEntity), entity(""), "no `name`"},
      {"unsupported geometry", kCreate, std::string(msgs::kEntityFactory),
       factory("m", mesh, "", Pose2D{8, 8, 0}), "a mesh the world cannot read"},
      {"XML that does not parse", kCreate, std::string(msgs::kEntityFactory),
       factory("m", "<sdf version=\"1.8\"><model name=\"m\">\n<link>", "", Pose2D{8, 8, 0}),
       "XML error"},
      {"SDF that sdformat refuses", kCreate, std::string(msgs::kEntityFactory),
       factory("m", "<sdf version=\"1.8\"><model><link name=\"l\"/></model></sdf>"), "refused"},
      {"SDF without a model", kCreate, std::string(msgs::kEntityFactory),
       factory("m", "<sdf version=\"1.8\"><world name=\"w\"/></sdf>"), "no <model>"},
      {"a model with nothing to collide", kCreate, std::string(msgs::kEntityFactory),
       factory("m", "<sdf version=\"1.8\"><model name=\"m\"><link name=\"l\"/></model></sdf>"),
       "no box, cylinder or sphere"},
      {"NaN position", kCreate, std::string(msgs::kEntityFactory), msgs::serialize(nan_pose),
       "not finite"},
      {"NaN orientation", kCreate, std::string(msgs::kEntityFactory), msgs::serialize(nan_quat),
       "not finite"},
      {"NaN in an include's pose", kCreate, std::string(msgs::kEntityFactory),
       factory("u", "<include><uri>ugv</uri><pose>nan 0 0 0 0 0</pose></include>"),
       "not 3 or 6 finite"},
      {"a UGV without a name", kCreate, std::string(msgs::kEntityFactory), factory("", ""),
       "needs a `name`"},
      // Model files load (robot_model.hpp); one that is nowhere on the resource path is refused.
      {"a model file not found", kCreate, std::string(msgs::kEntityFactory),
       factory("m", "", "model://forklift"), "not in any folder of the resource path"},
      {"an unknown frame", kCreate, std::string(msgs::kEntityFactory),
       [] {
         ignition::msgs::EntityFactory f;
         f.set_name("u");
         f.set_relative_to("nowhere");
         return msgs::serialize(f);
       }(),
       "no such frame"},
      {"a payload that does not parse", kCreate, std::string(msgs::kEntityFactory), "\xff\xff\xff",
       "does not parse"},
      {"the wrong type", kRemove, std::string(msgs::kTwist), entity("crate"), "expects"},
  };
  uint64_t count = w->warning_count();
  for (const Case& c : cases) {
    const Status s = w->handle_message(c.topic, c.type, c.payload);
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << c.what << ": " << s.message();
    EXPECT_EQ(w->warning_count(), count + 1) << c.what;
    count = w->warning_count();
    ASSERT_FALSE(warnings.empty());
    EXPECT_EQ(warnings.back(), s.message()) << c.what;
  }
  EXPECT_EQ(w->vehicles(), std::vector<std::string>{"ugv1"});
  EXPECT_EQ(w->static_models(), std::vector<std::string>{"crate"});
  EXPECT_EQ(w->static_shapes().size(), 1u);
  w->step_n(200);
  const auto v = *w->vehicle("ugv1");
  EXPECT_TRUE(std::isfinite(v.pose.x) && std::isfinite(v.pose.y) && std::isfinite(v.pose.yaw));
  for (const auto& shape : w->static_shapes()) {
    EXPECT_TRUE(std::isfinite(shape.pose.x) && std::isfinite(shape.pose.y));
  }
}

// --- Through the lock-step glue ---

ParticipantOptions named(const std::string& name) {
  ParticipantOptions o;
  o.name = name;
  return o;
}

TEST(SpawnThroughTheGlue, AUgvSpawnedMidRunIsDrivenThenRemoved) {
  InProcessCoordinator coord;
  std::vector<Publish> tap;
  coord.set_tap([&](const Publish& m) { tap.push_back(m); });
  auto w = flat();
  Participant world_p(coord.make_link(), named("world"));
  Participant driver(coord.make_link(), named("driver"));
  WorldParticipant glue(*w, world_p);
  std::thread t([&] {
    EXPECT_TRUE(driver.sleep_until(at_ms(200)));
    driver.publish(kCreate, factory("ugv2", "", "ugv", Pose2D{0.0, 1.0, 0.0}),
                   std::string(msgs::kEntityFactory));
    EXPECT_TRUE(driver.sleep_until(at_ms(300)));
    driver.publish("/model/ugv2/cmd_vel", twist(1.0, 0.0), std::string(msgs::kTwist));
    EXPECT_TRUE(driver.sleep_until(at_ms(2000)));
    driver.publish(kRemove, entity("ugv2"), std::string(msgs::kEntity));
    EXPECT_TRUE(driver.sleep_until(at_ms(2100)));
    // Nobody takes it any more: not delivered, so not a rejection either.
    driver.publish("/model/ugv2/cmd_vel", twist(1.0, 0.0), std::string(msgs::kTwist));
    driver.sleep_until(at_ms(2500));
    driver.leave();
  });
  ASSERT_TRUE(glue.run_until(at_ms(2000)));
  ASSERT_TRUE(w->vehicle("ugv2"));
  // From 0.3 s: 1 s ramp (0.5 m) then 0.7 s at 1 m/s.
  EXPECT_NEAR(w->vehicle("ugv2")->pose.x, 1.2, 0.002);
  EXPECT_TRUE(glue.run_until(at_ms(2500)));
  t.join();
  EXPECT_EQ(glue.rejected_inputs(), 0u) << glue.last_rejection();
  EXPECT_FALSE(w->vehicle("ugv2"));
  SimTime first_scan = SimTime::infinite(), last_output = SimTime::zero();
  for (const auto& m : tap) {
    if (m.topic == "/model/ugv2/scan") first_scan = std::min(first_scan, m.stamp);
    if (m.topic.starts_with("/model/ugv2/") && m.topic != "/model/ugv2/cmd_vel") {
      last_output = std::max(last_output, m.stamp);
    }
  }
  // Sensors from the step after the spawn, on their grid (scan at 10 Hz); none after removal.
  EXPECT_GT(first_scan, at_ms(200));
  EXPECT_LE(first_scan, at_ms(300));
  EXPECT_GT(last_output, at_ms(1900));
  EXPECT_LE(last_output, at_ms(2000));
}

TEST(SpawnThroughTheGlue, RefusedCreatesCountAsRejectedInputs) {
  InProcessCoordinator coord;
  auto w = flat();
  Participant world_p(coord.make_link(), named("world"));
  Participant driver(coord.make_link(), named("driver"));
  WorldParticipant glue(*w, world_p);
  std::thread t([&] {
    driver.sleep_until(at_ms(10));
    driver.publish(kCreate, factory("m", "<sdf>"));  // untyped: taken as an EntityFactory
    driver.publish(kRemove, entity("nobody"), std::string(msgs::kEntity));
    driver.leave();
  });
  EXPECT_TRUE(glue.run_until(at_ms(100)));
  t.join();
  EXPECT_EQ(glue.rejected_inputs(), 2u);
  EXPECT_NE(glue.last_rejection().find("no such model"), std::string::npos);
  EXPECT_TRUE(w->vehicles().empty());
}

TEST(Post, RunsOnTheWorldThreadBeforeTheNextStep) {
  InProcessCoordinator coord;
  auto w = flat();
  Participant world_p(coord.make_link(), named("world"));
  Participant driver(coord.make_link(), named("driver"));
  WorldParticipant glue(*w, world_p);
  const std::thread::id world_thread = std::this_thread::get_id();
  // Posted from other threads before the run: all run, in order per thread, before step 1.
  std::atomic<int> ran{0};
  std::vector<SimTime> seen_at;
  {
    std::thread a([&] {
      for (int i = 0; i < 500; ++i) glue.post([&](World&) { ++ran; });
    });
    std::thread b([&] {
      glue.post([&](World& world) {
        EXPECT_EQ(std::this_thread::get_id(), world_thread);
        seen_at.push_back(world.sim_time());
        // Spawned here: its cmd_vel is subscribed before the next step.
        EXPECT_TRUE(world.spawn_vehicle("ugv1", Pose2D{}).ok());
      });
    });
    a.join();
    b.join();
  }
  SimTime posted_run_at = SimTime::infinite();
  std::thread t([&] {
    EXPECT_TRUE(driver.sleep_until(at_ms(100)));
    driver.publish("/model/ugv1/cmd_vel", twist(1.0, 0.0), std::string(msgs::kTwist));
    EXPECT_TRUE(driver.sleep_until(at_ms(500)));
    // The driver holds time at 0.5 s: the world cannot step past it before running this.
    glue.post([&](World& world) {
      EXPECT_EQ(std::this_thread::get_id(), world_thread);
      posted_run_at = world.sim_time();
      EXPECT_TRUE(world.set_cmd_vel("ugv1", {0.0, 0.0}).ok());
    });
    glue.post([](World&) { throw std::runtime_error("boom"); });
    driver.sleep_until(at_ms(1000));
    driver.leave();
  });
  EXPECT_TRUE(glue.run_until(at_ms(1000)));
  t.join();
  EXPECT_EQ(ran.load(), 500);
  ASSERT_EQ(seen_at.size(), 1u);
  EXPECT_EQ(seen_at[0], SimTime::zero());
  EXPECT_GE(posted_run_at, at_ms(499));
  EXPECT_LE(posted_run_at, at_ms(500));
  EXPECT_GT(w->vehicle("ugv1")->pose.x, 0.0);  // the cmd_vel after the posted spawn arrived
  EXPECT_EQ(w->vehicle("ugv1")->command.linear_x, 0.0);
  EXPECT_EQ(glue.rejected_inputs(), 1u);
  EXPECT_NE(glue.last_rejection().find("boom"), std::string::npos);
}

}  // namespace
}  // namespace fieldproof::world
