// The fleet part without processes: scenario overrides, seeds and the matrix, the run index
// (schema, corrupt and newer files, reindex, concurrent writers), the report's statistics, diff.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "fieldproof/fleet/run_index.hpp"
#include "fieldproof/fleet/runs.hpp"
#include "fieldproof/fleet/slurm.hpp"
#include "fieldproof/fleet/sweep.hpp"
#include "fieldproof/fleet/sweep_report.hpp"
#include "fieldproof/scenario/overrides.hpp"
#include "fieldproof/scenario/scenario.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace fieldproof;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(FIELDPROOF_TEST_TMP) / "fleet_scratch" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

json make_run(const std::string& id, const std::string& status, int seed, double kpi,
              const std::string& started = "2026-12-01T10:00:00.000Z") {
  return {{"run_id", id},
          {"scenario", {{"name", "demo"}, {"file", "demo.yaml"}, {"digest", "sha256:x"}}},
          {"status", status},
          {"verdict", status == "passed" ? "PASS" : "FAIL"},
          {"reason", status == "passed" ? "every assertion passed" : "reached_goal failed"},
          {"exit_code", status == "passed" ? 0 : 1},
          {"seed", seed},
          {"started_utc", started},
          {"durations", {{"wall_s", 0.5}, {"sim_s", 12.0}}},
          {"assertions",
           {{{"name", "reached_goal"},
             {"type", "reach_pose"},
             {"status", status},
             {"reason", status == "passed" ? "within 0.4 m" : "closest 0.6 m"}}}},
          {"kpis", {{"reached_goal.closest_m", {{"value", kpi}, {"unit", "m"}}}}}};
}

void write_run(const fs::path& dir, const json& run) {
  fs::create_directories(dir);
  std::ofstream(dir / "run.json") << run.dump(2);
}

scenario::OverrideResult apply(const std::string& yaml, const std::string& set) {
  auto o = scenario::parse_override(set);
  EXPECT_TRUE(o.ok()) << o.status().message();
  return scenario::apply_overrides(yaml, {*o});
}

constexpr const char* kYaml = R"(name: demo
time: {mode: sim, rtf: 1.0}
vehicles:
  - name: ugv1
    parameters: {controller.max_linear: 0.8, goal_tolerance: 0.3}
assertions:
  - {name: reached, type: reach_pose, tolerance_m: 0.5}
)";

}  // namespace

TEST(Overrides, ReplacesANestedValueByItsPath) {
  const auto r = apply(kYaml, "assertions[0].tolerance_m=0.25");
  ASSERT_TRUE(r.ok()) << r.errors[0];
  EXPECT_NE(r.yaml.find("tolerance_m: 0.25"), std::string::npos) << r.yaml;
  const auto t = apply(kYaml, "time.rtf=0");
  ASSERT_TRUE(t.ok());
  EXPECT_NE(t.yaml.find("rtf: 0"), std::string::npos) << t.yaml;
}

TEST(Overrides, ADottedParameterKeyIsOneKey) {
  const auto r = apply(kYaml, "vehicles[0].parameters.controller.max_linear=0.6");
  ASSERT_TRUE(r.ok()) << r.errors[0];
  EXPECT_NE(r.yaml.find("controller.max_linear: 0.6"), std::string::npos) << r.yaml;
  const auto n = apply(kYaml, "vehicles[0].parameters.planner.inflation=0.2");
  ASSERT_TRUE(n.ok());
  EXPECT_NE(n.yaml.find("planner.inflation: 0.2"), std::string::npos) << n.yaml;
}

TEST(Overrides, AMissingListItemIsAnError) {
  const auto r = apply(kYaml, "vehicles[3].name=x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].find("vehicles has 1 item(s)"), std::string::npos) << r.errors[0];
}

TEST(Overrides, ANumberReplacedByTextIsAnError) {
  const auto r = apply(kYaml, "time.rtf=fast");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].find("is not a number"), std::string::npos) << r.errors[0];
}

TEST(Overrides, AnUnknownKeyIsNamedByTheValidation) {
  const fs::path d = fresh_dir("unknown_key");
  std::ofstream(d / "s.yaml") << kYaml;
  const auto v = scenario::load_scenario_file_with(d / "s.yaml", {{"time.rtff", "2"}}, {});
  ASSERT_FALSE(v.errors.empty());
  bool named = false;
  for (const auto& e : v.errors) named = named || e.to_string().find("rtff") != std::string::npos;
  EXPECT_TRUE(named) << v.format_errors();
}

TEST(Overrides, MalformedTextIsRefused) {
  EXPECT_FALSE(scenario::parse_override("time.rtf").ok());
  EXPECT_FALSE(scenario::parse_override("=1").ok());
  EXPECT_FALSE(scenario::parse_override("a..b=1").ok());
  EXPECT_FALSE(scenario::parse_override("a[x]=1").ok());
}

TEST(Seeds, RangesAndLists) {
  EXPECT_EQ(fleet::parse_seed_range("3..5").value(), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(fleet::parse_seed_range("7").value(), (std::vector<int64_t>{7}));
  const auto empty = fleet::parse_seed_range("5..3");
  EXPECT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  EXPECT_FALSE(fleet::parse_seed_range("a..3").ok());
  EXPECT_FALSE(fleet::parse_seed_range("0..2147483648").ok());
  const fs::path d = fresh_dir("seeds");
  std::ofstream(d / "list") << "# seeds\n4\n\n12  # slow one\nx\n";
  const auto bad = fleet::read_seed_list(d / "list");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(":5:"), std::string::npos) << bad.status().message();
  std::ofstream(d / "list2") << "4\n12\n";
  EXPECT_EQ(fleet::read_seed_list(d / "list2").value(), (std::vector<int64_t>{4, 12}));
  EXPECT_EQ(fleet::read_seed_list(d / "absent").status().code(), StatusCode::kIoError);
}

TEST(Seeds, CollectedFromRangesThenTheListWithRepeatsOnce) {
  const fs::path d = fresh_dir("collect_seeds");
  std::ofstream(d / "list") << "9\n4\n2\n";
  EXPECT_EQ(fleet::collect_seeds({"3..5", "4", "1"}, d / "list").value(),
            (std::vector<int64_t>{3, 4, 5, 1, 9, 2}));
  EXPECT_EQ(fleet::collect_seeds({"2"}, "").value(), (std::vector<int64_t>{2}));
  EXPECT_TRUE(fleet::collect_seeds({}, "").value().empty());
  const auto bad_range = fleet::collect_seeds({"1..2", "x"}, d / "list");
  ASSERT_FALSE(bad_range.ok());
  EXPECT_EQ(bad_range.status().message(),
            "--seeds 'x': expected A..B (inclusive) or N, with whole numbers");
  const auto no_list = fleet::collect_seeds({"1"}, d / "absent");
  ASSERT_FALSE(no_list.ok());
  EXPECT_EQ(no_list.status().code(), StatusCode::kIoError);
}

TEST(Shard, IndexSlashCount) {
  const auto s = fleet::parse_shard("2/5");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 5);
  // The range (0 <= I < N) is run_sweep's check; the parse takes any two whole numbers.
  EXPECT_EQ(fleet::parse_shard("5/3")->index, 5);
  for (const char* bad : {"", "2", "2/", "/5", "a/5", "2/5/1", "2/5x", "1.5/3", "2/99999999999"}) {
    const auto r = fleet::parse_shard(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(),
              std::string("--shard '") + bad + "': expected I/N (0 <= I < N)");
  }
}

TEST(Sweep, TheMatrixIsSeedsTimesValuesTimesRepetitions) {
  fleet::SweepSpec s;
  s.seeds = {1, 2};
  s.params = {{"time.rtf", {"0", "2"}}, {"a.b", {"x", "y", "z"}}};
  s.repeat = 2;
  const auto pts = fleet::expand(s);
  ASSERT_EQ(pts.size(), 2u * 6u * 2u);
  EXPECT_EQ(pts[0].id, "s1-p0-r0");
  EXPECT_EQ(pts[1].id, "s1-p0-r1");
  EXPECT_EQ(pts.back().id, "s2-p5-r1");
  EXPECT_EQ(pts.back().overrides[0].value, "2");
  EXPECT_EQ(pts.back().overrides[1].value, "z");
  EXPECT_FALSE(fleet::parse_param("time.rtf=1,,2").ok());
  EXPECT_FALSE(fleet::parse_param("time.rtf").ok());
  const auto p = fleet::parse_param("time.rtf=0,2");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->values, (std::vector<std::string>{"0", "2"}));
}

TEST(Sweep, ShardsPartitionThePlansPositions) {
  for (int n = 1; n <= 7; ++n) {
    for (size_t pos = 0; pos < 50; ++pos) {
      int owners = 0;
      for (int i = 0; i < n; ++i) owners += fleet::in_shard(pos, i, n);
      EXPECT_EQ(owners, 1) << pos << " of " << n << " shards";
    }
  }
  EXPECT_TRUE(fleet::in_shard(7, 1, 3));
  EXPECT_FALSE(fleet::in_shard(7, 0, 3));
  EXPECT_FALSE(fleet::in_shard(0, 0, 0));
}

TEST(Slurm, ArrayRangesAreSbatchSyntax) {
  EXPECT_EQ(fleet::array_ranges({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(fleet::array_ranges({0, 2, 3, 4, 7, 9, 10}), "0,2-4,7,9-10");
  EXPECT_EQ(fleet::array_ranges({5}), "5");
  EXPECT_EQ(fleet::array_ranges({}), "");
}

TEST(Slurm, TaskStatesFromSacctAndScontrol) {
  const auto a = fleet::parse_sacct(
      "12_0|COMPLETED|0:0\n12_1|FAILED|1:0\n12_2|CANCELLED by 0|0:15\n12_[3-5]|PENDING|0:0\n"
      "12_0.batch|COMPLETED|0:0\n");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[1].task, 1);
  EXPECT_EQ(a[1].state, "FAILED");
  EXPECT_EQ(a[1].exit_code, 1);
  EXPECT_EQ(a[2].state, "CANCELLED");
  const auto c = fleet::parse_scontrol_jobs(
      "JobId=13 ArrayJobId=12 ArrayTaskId=1 JobName=x JobState=TIMEOUT Reason=None ExitCode=0:15\n"
      "JobId=12 ArrayJobId=12 ArrayTaskId=4-5 JobState=PENDING ExitCode=0:0\n"
      "JobId=14 ArrayJobId=12 ArrayTaskId=0 JobState=COMPLETED ExitCode=0:0\n");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].task, 1);
  EXPECT_EQ(c[0].state, "TIMEOUT");
  EXPECT_EQ(c[1].task, 0);
  EXPECT_EQ(c[1].state, "COMPLETED");
}

TEST(Sweep, TheReproducingCommandCarriesSeedValuesAndPace) {
  const json plan = {{"scenario", {{"file", "examples/scenarios/a b.yaml"}}}, {"max_rtf", 0}};
  const json point = {{"seed", 4}, {"overrides", {{{"path", "time.rtf"}, {"value", "2"}}}}};
  EXPECT_EQ(fleet::reproduce_command(plan, point),
            "fieldproof run 'examples/scenarios/a b.yaml' --seed 4 --set time.rtf=2 --max-rtf 0");
}

TEST(Statistics, WilsonIntervalAndPercentiles) {
  const auto ci = fleet::wilson_interval(18, 20);
  EXPECT_NEAR(ci.low, 0.699, 0.001);
  EXPECT_NEAR(ci.high, 0.972, 0.001);
  const auto all = fleet::wilson_interval(10, 10);
  EXPECT_DOUBLE_EQ(all.high, 1.0);
  EXPECT_LT(all.low, 1.0);
  EXPECT_EQ(fleet::percentile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_EQ(fleet::percentile({1, 2, 3, 4}, 1.0), 4);
}

TEST(RunIndex, AddsListsAndFindsRuns) {
  const fs::path d = fresh_dir("index");
  write_run(d / "a-1", make_run("a-1", "passed", 1, 0.4, "2026-12-01T10:00:00.000Z"));
  write_run(d / "a-2", make_run("a-2", "failed", 2, 0.6, "2026-12-01T11:00:00.000Z"));
  auto opened = fleet::RunIndex::open(d / "index.sqlite");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  const auto idx = std::move(opened).value();
  for (const char* run : {"a-1", "a-2", "a-2"}) {  // a-2 again: replaced, not doubled
    const Status s = idx->add_run(d / run);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  EXPECT_EQ(idx->list({}).value().size(), 2u);
  fleet::RunFilter f;
  f.status = "failed";
  const auto failed = idx->list(f).value();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].id, "a-2");
  EXPECT_EQ(failed[0].seed, 2);
  f = {};
  f.since_utc = "2026-12-01T10:30:00";
  EXPECT_EQ(idx->list(f).value().size(), 1u);
  EXPECT_TRUE(idx->find("a-1").ok());
  const auto nope = idx->find("nope");
  EXPECT_FALSE(nope.ok());
  EXPECT_EQ(nope.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(nope.status().message(), "no run 'nope' in " + (d / "index.sqlite").string());
  // Nothing to add: the error names the missing run.json.
  const Status missing = idx->add_run(d / "absent");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("run.json: cannot be read"), std::string::npos) << missing.message();
}

TEST(RunIndex, ASweepPointKnowsItsSweep) {
  const fs::path d = fresh_dir("index_sweep");
  fs::create_directories(d / "sw");
  std::ofstream(d / "sw" / fleet::kSweepPlanFile)
      << json{{"sweep_id", "sw"}, {"points", {{{"id", "s3"}, {"seed", 3}}}}}.dump();
  write_run(d / "sw" / "s3", make_run("s3", "passed", 3, 0.4));
  const Status added = fleet::index_finished_run(d / "index.sqlite", d / "sw" / "s3");
  ASSERT_TRUE(added.ok()) << added.message();
  auto idx = fleet::RunIndex::open(d / "index.sqlite");
  ASSERT_TRUE(idx.ok()) << idx.status().message();
  fleet::RunFilter f;
  f.sweep_id = "sw";
  const auto rows = (*idx)->list(f).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].id, "sw/s3");
  EXPECT_EQ(rows[0].point_id, "s3");
}

TEST(RunIndex, TheRunHookLeavesItsRowsInTheLogForTheNextConnection) {
  const fs::path d = fresh_dir("index_wal");
  write_run(d / "a-1", make_run("a-1", "passed", 1, 0.4));
  write_run(d / "a-2", make_run("a-2", "failed", 2, 0.6));
  for (const char* run : {"a-1", "a-2"}) {
    const Status s = fleet::index_finished_run(d / "index.sqlite", d / run);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // No checkpoint at the hook's close: the rows are in the write-ahead log, not yet in the file.
  std::error_code ec;
  EXPECT_GT(fs::file_size(d / "index.sqlite-wal", ec), 0u);
  {
    auto idx = fleet::RunIndex::open(d / "index.sqlite");
    ASSERT_TRUE(idx.ok()) << idx.status().message();
    EXPECT_EQ((*idx)->list({}).value().size(), 2u);
  }
  // An ordinary connection, closing last, checkpoints them into index.sqlite and drops the log.
  EXPECT_FALSE(fs::exists(d / "index.sqlite-wal", ec));
  for (const char* s : {"-wal", "-shm"}) fs::remove(d / (std::string("index.sqlite") + s), ec);
  auto idx = fleet::RunIndex::open(d / "index.sqlite");
  ASSERT_TRUE(idx.ok()) << idx.status().message();
  EXPECT_EQ((*idx)->list({}).value().size(), 2u);
}

TEST(RunIndex, ADamagedFileIsRefusedAndReindexRebuildsIt) {
  const fs::path d = fresh_dir("corrupt");
  write_run(d / "a-1", make_run("a-1", "passed", 1, 0.4));
  std::ofstream(d / "index.sqlite") << std::string(8192, 'x');
  const auto damaged = fleet::RunIndex::open(d / "index.sqlite");
  EXPECT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(damaged.status().message().find("reindex"), std::string::npos)
      << damaged.status().message();
  // The hook does not write into it either.
  const Status hook = fleet::index_finished_run(d / "index.sqlite", d / "a-1");
  EXPECT_FALSE(hook.ok());
  EXPECT_NE(hook.message(), "");
  const auto r = fleet::reindex(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->runs, 1u);
  auto idx = fleet::RunIndex::open(d / "index.sqlite");
  ASSERT_TRUE(idx.ok()) << idx.status().message();
  EXPECT_EQ((*idx)->list({}).value().size(), 1u);
}

TEST(RunIndex, ANewerSchemaIsRefused) {
  const fs::path d = fresh_dir("newer");
  { ASSERT_TRUE(fleet::RunIndex::open(d / "index.sqlite").ok()); }
  // As a newer fieldproof would leave it (user_version: the header's big-endian int at 60).
  {
    std::fstream f(d / "index.sqlite", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(60);
    const char v[4] = {0, 0, 0, static_cast<char>(fleet::kIndexSchemaVersion + 1)};
    f.write(v, 4);
  }
  for (const char* s : {"-wal", "-shm"}) fs::remove(d / (std::string("index.sqlite") + s));
  const auto newer = fleet::RunIndex::open(d / "index.sqlite");
  EXPECT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(newer.status().message().find("newer"), std::string::npos) << newer.status().message();
}

TEST(RunIndex, SeveralWritersAtOnceAllLand) {
  const fs::path d = fresh_dir("concurrent");
  constexpr int kThreads = 4, kRuns = 15;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kRuns; ++i) {
      const std::string id = "r" + std::to_string(t) + "-" + std::to_string(i);
      write_run(d / id, make_run(id, "passed", i, 0.1 * i));
    }
  }
  std::vector<std::thread> th;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    th.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        const std::string id = "r" + std::to_string(t) + "-" + std::to_string(i);
        if (!fleet::index_finished_run(d / "index.sqlite", d / id).ok()) ++failures;
      }
    });
  }
  for (auto& x : th) x.join();
  EXPECT_EQ(failures.load(), 0);
  auto idx = fleet::RunIndex::open(d / "index.sqlite");
  ASSERT_TRUE(idx.ok()) << idx.status().message();
  EXPECT_EQ((*idx)->list({}).value().size(), static_cast<size_t>(kThreads * kRuns));
}

TEST(RunsDiff, VerdictsAssertionsAndKpisSideBySide) {
  const json a = make_run("a", "passed", 1, 0.4);
  const json b = make_run("b", "failed", 4, 0.58);
  const json d = fleet::diff_runs(a, b);
  EXPECT_TRUE(d["verdict_changed"].get<bool>());
  ASSERT_EQ(d["kpis"].size(), 1u);
  EXPECT_TRUE(d["kpis"][0]["changed"].get<bool>());
  EXPECT_NEAR(d["kpis"][0]["delta"].get<double>(), 0.18, 1e-9);
  EXPECT_TRUE(d["assertions"][0]["changed"].get<bool>());
  const std::string text = fleet::render_diff(d, false);
  EXPECT_NE(text.find("* verdict"), std::string::npos) << text;
  const json same = fleet::diff_runs(a, a);
  EXPECT_FALSE(same["verdict_changed"].get<bool>());
  EXPECT_EQ(same["changed"].get<int>(), 0);
}

TEST(RunsList, SinceAcceptsDatesAndAges) {
  EXPECT_EQ(fleet::parse_since("2026-12-01T10:00:00Z", 0).value(), "2026-12-01T10:00:00");
  EXPECT_EQ(fleet::parse_since("2026-12-01", 0).value(), "2026-12-01");
  const auto age = fleet::parse_since("1h", 7200LL * 1000000000LL);
  ASSERT_TRUE(age.ok());
  EXPECT_EQ(*age, "1970-01-01T01:00:00.000");
  const auto bad = fleet::parse_since("yesterday", 0);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}
