// `fieldproof sweep`, `sweep report` and `runs` as a user runs them (label integration): a local
// sweep of 20 points with 2 seeds failing through a tight tolerance, its report and index; an
// interrupted sweep (SIGINT to the process) resumed; runs diff of two runs; bad input.
#include <spawn.h>

#include <chrono>
#include <set>
#include <sstream>

#include "integration/cli_test_util.hpp"

extern char** environ;

namespace fs = std::filesystem;
using json = nlohmann::json;
using fieldproof::integration::fresh_runs_dir;
using fieldproof::integration::read_file;
using fieldproof::integration::run_cli;
using fieldproof::integration::run_json;

namespace {

constexpr const char* kScenario = "tests/fleet/data/quick_goal.yaml";

json parse(const std::string& text) { return json::parse(text); }

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(SweepCli, TwentyPointsReportIndexAndDiff) {
  const fs::path runs = fresh_runs_dir("sweep20");
  // 10 seeds x 2 values of a parameter that changes no outcome (the recording on or off).
  const auto r = run_cli(std::string("sweep ") + kScenario + " --seeds 0..9 " +
                         "--param outputs.record=true,false -j 2 --max-rtf 0 --sweep-id sw " +
                         "--runs-dir " + runs.string());
  ASSERT_EQ(r.exit_code, 1) << r.out;  // some points failed
  const fs::path sw = runs / "sw";
  // Every point is a normal run directory; the failing ones are the runs whose verdict failed.
  std::set<std::string> failed_runs;
  std::set<int> failed_seeds;
  for (int s = 0; s < 10; ++s) {
    for (int p = 0; p < 2; ++p) {
      const std::string id = "s" + std::to_string(s) + "-p" + std::to_string(p);
      const fs::path d = sw / id;
      ASSERT_TRUE(fs::exists(d / "run.json")) << d;
      const json run = run_json(d);
      EXPECT_EQ(run["seed"], s);
      EXPECT_EQ(run["scenario"]["overrides"]["outputs.record"], p == 0 ? "true" : "false");
      EXPECT_EQ(run.contains("recording"), p == 0) << id;
      EXPECT_TRUE(fs::exists(d / "report.html"));
      if (run["status"] != "passed") {
        failed_runs.insert(id);
        failed_seeds.insert(s);
      }
    }
  }
  ASSERT_EQ(failed_seeds.size(), 2u) << "the tolerance is meant to fail 2 of seeds 0..9";
  ASSERT_EQ(failed_runs.size(), 4u) << "both values of the parameter fail the same seeds";

  const json rep = parse(read_file(sw / "sweep.json"));
  EXPECT_EQ(rep["summary"]["planned"], 20);
  EXPECT_EQ(rep["summary"]["passed"], 16);
  EXPECT_NEAR(rep["summary"]["pass_rate"].get<double>(), 0.8, 1e-9);
  EXPECT_NEAR(rep["summary"]["confidence"]["low"].get<double>(), 0.584, 0.001);
  ASSERT_EQ(rep["by_parameter"].size(), 1u);
  for (const json& v : rep["by_parameter"][0]["values"]) {
    EXPECT_EQ(v["total"], 10);
    EXPECT_EQ(v["passed"], 8);
  }
  std::set<std::string> reported;
  for (const json& f : rep["failing"]) {
    reported.insert(f["id"].get<std::string>());
    EXPECT_NE(f["command"].get<std::string>().find("--seed " + std::to_string(f["seed"].get<int>())),
              std::string::npos);
  }
  EXPECT_EQ(reported, failed_runs);
  bool reach_counted = false;
  for (const json& a : rep["assertions"]) {
    if (a["name"] == "reached_goal") {
      EXPECT_EQ(a["not_passed"], 4);
      reach_counted = true;
    }
  }
  EXPECT_TRUE(reach_counted);
  ASSERT_FALSE(rep["kpis"].empty());
  EXPECT_EQ(rep["kpis"][0]["n"], 20);
  EXPECT_LE(rep["kpis"][0]["p5"].get<double>(), rep["kpis"][0]["p95"].get<double>());
  const std::string junit = read_file(sw / "junit.xml");
  EXPECT_EQ(count(junit, "<testcase "), 20u);
  EXPECT_EQ(count(junit, "<failure "), 4u);
  const std::string html = read_file(sw / "sweep.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("Wilson"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // self-contained, nothing to fetch
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
  EXPECT_NE(read_file(sw / "sweep.md").find("Pass rate 80.0%"), std::string::npos);

  // `sweep report` writes the same figures again.
  fs::remove(sw / "sweep.json");
  const auto again = run_cli("sweep report sw --runs-dir " + runs.string());
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_EQ(parse(read_file(sw / "sweep.json"))["summary"], rep["summary"]);

  // The index has every point, with its sweep; the filters combine.
  const auto all = run_cli("runs list --sweep sw --json --runs-dir " + runs.string(), false);
  ASSERT_EQ(all.exit_code, 0) << all.out;
  EXPECT_EQ(parse(all.out).size(), 20u);
  const auto failed =
      run_cli("runs list --sweep sw --status failed --json --runs-dir " + runs.string(), false);
  ASSERT_EQ(failed.exit_code, 0);
  std::set<std::string> listed;
  for (const json& row : parse(failed.out)) listed.insert(row["point_id"].get<std::string>());
  EXPECT_EQ(parse(failed.out)[0]["overrides"].size(), 1u);
  EXPECT_EQ(listed, failed_runs);

  // The printed command reproduces a failing point.
  const std::string cmd = rep["failing"][0]["command"].get<std::string>();
  const auto repro = run_cli(cmd.substr(std::string("fieldproof ").size()) + " --runs-dir " +
                             (runs / "repro").string());
  EXPECT_EQ(repro.exit_code, 1) << repro.out;

  // runs diff: a passing and a failing point.
  const std::string bad = *failed_runs.begin();
  std::string good;
  for (int s = 0; s < 10 && good.empty(); ++s) {
    if (!failed_seeds.count(s)) good = "s" + std::to_string(s) + "-p0";
  }
  const auto d = run_cli("runs diff sw/" + good + " sw/" + bad + " --runs-dir " + runs.string());
  EXPECT_EQ(d.exit_code, 1) << d.out;
  EXPECT_NE(d.out.find("* verdict"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("* reached_goal"), std::string::npos) << d.out;
  const auto dj = run_cli("runs diff sw/" + good + " sw/" + bad + " --json --runs-dir " +
                          runs.string(), false);
  EXPECT_TRUE(parse(dj.out)["verdict_changed"].get<bool>());
  const auto same = run_cli("runs diff sw/" + good + " " + (sw / good).string() + " --runs-dir " +
                            runs.string());
  EXPECT_EQ(same.exit_code, 0) << same.out;
  EXPECT_NE(same.out.find("0 difference(s)"), std::string::npos) << same.out;
}

TEST(SweepCli, AnInterruptedSweepResumes) {
  const fs::path runs = fresh_runs_dir("sweep_resume");
  const std::string bin = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
  const std::string dir = runs.string();
  std::vector<std::string> args = {bin,       "sweep",    kScenario, "--seeds",   "0..7",
                                   "-j",      "1",        "--max-rtf", "0",      "--sweep-id",
                                   "sw",      "--runs-dir", dir};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, bin.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  // Once two points have finished (their run.json is written last), interrupt the sweep.
  const auto finished = [&] {
    int n = 0;
    for (int s = 0; s < 8; ++s) n += fs::exists(runs / "sw" / ("s" + std::to_string(s)) / "run.json");
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (finished() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GE(finished(), 2);
  kill(pid, SIGINT);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130);
  std::map<std::string, std::string> before;  // finished point -> its started_utc
  for (int s = 0; s < 8; ++s) {
    const fs::path d = runs / "sw" / ("s" + std::to_string(s));
    if (!fs::exists(d / "run.json")) continue;
    const json run = run_json(d);
    if (run["status"] == "interrupted") continue;
    before[d.filename().string()] = run["started_utc"];
  }
  ASSERT_GE(before.size(), 2u);
  ASSERT_LT(before.size(), 8u) << "the sweep ended before it was interrupted";

  // Without --resume the id is taken.
  const auto taken = run_cli(std::string("sweep ") + kScenario + " --seeds 0..7 --sweep-id sw " +
                             "--max-rtf 0 --runs-dir " + dir);
  EXPECT_EQ(taken.exit_code, 2) << taken.out;
  EXPECT_NE(taken.out.find("--resume"), std::string::npos) << taken.out;

  const auto resumed = run_cli(std::string("sweep ") + kScenario + " --sweep-id sw --resume " +
                               "-j 2 --runs-dir " + dir);
  const json rep = parse(read_file(runs / "sw" / "sweep.json"));
  EXPECT_EQ(rep["summary"]["finished"], 8) << resumed.out;
  EXPECT_EQ(rep["summary"]["not_run"], 0);
  EXPECT_EQ(resumed.exit_code, rep["summary"]["failed"] == 0 ? 0 : 1) << resumed.out;
  for (const auto& [point, started] : before) {
    EXPECT_EQ(run_json(runs / "sw" / point)["started_utc"], started) << point << " ran again";
  }
  const auto listed = run_cli("runs list --sweep sw --json --runs-dir " + dir, false);
  EXPECT_EQ(parse(listed.out).size(), 8u);
}

TEST(SweepCli, BadInputIsRefusedBeforeAnythingRuns) {
  const fs::path runs = fresh_runs_dir("sweep_bad");
  const std::string base = std::string("sweep ") + kScenario + " --runs-dir " + runs.string();
  const auto unknown = run_cli(base + " --seeds 0..1 --param time.rtff=1,2");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("rtff"), std::string::npos) << unknown.out;
  const auto type = run_cli(base + " --seeds 0..1 --param time.rtf=fast");
  EXPECT_EQ(type.exit_code, 2) << type.out;
  EXPECT_NE(type.out.find("time.rtf=fast"), std::string::npos) << type.out;
  const auto index = run_cli(base + " --seeds 0..1 --param vehicles[4].name=x");
  EXPECT_EQ(index.exit_code, 2) << index.out;
  const auto empty = run_cli(base + " --seeds 5..3");
  EXPECT_EQ(empty.exit_code, 2) << empty.out;
  EXPECT_NE(empty.out.find("empty"), std::string::npos) << empty.out;
  EXPECT_FALSE(fs::exists(runs / "quick_goal-sweep-1")) << "nothing may run on bad input";
  const auto missing = run_cli("sweep report nope --runs-dir " + runs.string());
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
}

TEST(RunsCli, ADamagedIndexIsRebuiltByReindexAndANewerOneRefused) {
  const fs::path runs = fresh_runs_dir("runs_index");
  const auto r = run_cli(std::string("run ") + kScenario + " --max-rtf 0 --run-id one --runs-dir " +
                         runs.string());
  ASSERT_LE(r.exit_code, 1) << r.out;
  const auto listed = run_cli("runs list --json --runs-dir " + runs.string(), false);
  ASSERT_EQ(listed.exit_code, 0);
  ASSERT_EQ(parse(listed.out).size(), 1u);  // `fieldproof run` indexed itself
  const auto shown = run_cli("runs show one --runs-dir " + runs.string());
  EXPECT_EQ(shown.exit_code, 0);
  EXPECT_NE(shown.out.find("reached_goal"), std::string::npos) << shown.out;

  for (const char* s : {"-wal", "-shm"}) fs::remove(runs / (std::string("index.sqlite") + s));
  std::ofstream(runs / "index.sqlite", std::ios::trunc) << std::string(4096, 'x');
  const auto damaged = run_cli("runs list --runs-dir " + runs.string());
  EXPECT_EQ(damaged.exit_code, 2) << damaged.out;
  EXPECT_NE(damaged.out.find("reindex"), std::string::npos) << damaged.out;
  const auto re = run_cli("runs reindex --runs-dir " + runs.string());
  EXPECT_EQ(re.exit_code, 0) << re.out;
  const auto after = run_cli("runs list --json --runs-dir " + runs.string(), false);
  ASSERT_EQ(after.exit_code, 0) << after.out;
  EXPECT_EQ(parse(after.out).size(), 1u);

  {
    std::fstream f(runs / "index.sqlite", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(60);
    const char v[4] = {0, 0, 0, 99};
    f.write(v, 4);
  }
  const auto newer = run_cli("runs list --runs-dir " + runs.string());
  EXPECT_EQ(newer.exit_code, 2) << newer.out;
  EXPECT_NE(newer.out.find("newer"), std::string::npos) << newer.out;
}

TEST(SweepCli, ShardsPartitionThePointsAndTogetherEqualTheWholeSweep) {
  const fs::path runs = fresh_runs_dir("sweep_shard");
  const std::string base = std::string("sweep ") + kScenario + " --max-rtf 0 -j 2 --runs-dir " +
                           runs.string();
  const auto whole = run_cli(base + " --seeds 0..5 --sweep-id whole");
  ASSERT_EQ(whole.exit_code, 1) << whole.out;
  const std::vector<std::string> ids = {"s0", "s1", "s2", "s3", "s4", "s5"};
  std::set<std::string> seen;
  for (int i = 0; i < 3; ++i) {
    // The first shard plans the sweep; the others join it with --resume, as array tasks do.
    const std::string shard = " --shard " + std::to_string(i) + "/3 --no-report";
    const auto r = run_cli(base + (i == 0 ? " --seeds 0..5 --sweep-id sh" : " --sweep-id sh --resume") +
                           shard);
    ASSERT_LE(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("2 of 2 points done"), std::string::npos) << r.out;
    for (size_t p = 0; p < ids.size(); ++p) {
      const bool exists = fs::exists(runs / "sh" / ids[p] / "run.json");
      const bool mine = static_cast<int>(p % 3) == i;
      if (mine) {
        EXPECT_TRUE(exists) << "shard " << i << " did not run " << ids[p];
        EXPECT_TRUE(seen.insert(ids[p]).second) << ids[p] << " ran in two shards";
      } else {
        EXPECT_EQ(exists, seen.count(ids[p]) == 1) << "shard " << i << " ran " << ids[p];
      }
    }
  }
  EXPECT_EQ(seen.size(), ids.size());
  for (const auto& id : ids) {
    EXPECT_EQ(run_json(runs / "sh" / id)["status"], run_json(runs / "whole" / id)["status"]) << id;
  }
  const auto rep = run_cli("sweep report sh --runs-dir " + runs.string());
  EXPECT_EQ(rep.exit_code, 1) << rep.out;
  json sharded = parse(read_file(runs / "sh" / "sweep.json"))["summary"];
  json unsharded = parse(read_file(runs / "whole" / "sweep.json"))["summary"];
  sharded.erase("points_wall_s");  // wall time: the one figure that differs between two sweeps
  unsharded.erase("points_wall_s");
  EXPECT_EQ(sharded, unsharded);
  for (const char* bad : {"3/3", "1/0", "-1/2", "a/b", "1/2x"}) {
    const auto r = run_cli(base + " --sweep-id sh --resume --shard " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
  }
}

TEST(SweepCli, SlurmBadInputIsRefusedWithExit2) {
  const fs::path runs = fresh_runs_dir("sweep_slurm_bad");
  const std::string base = std::string("sweep ") + kScenario + " --seeds 0..1 --runs-dir " +
                           runs.string();
  const auto no_slurm = run_cli(base + " --executor slurm --sweep-id a", true, "PATH=/nonexistent ");
  EXPECT_EQ(no_slurm.exit_code, 2) << no_slurm.out;
  EXPECT_NE(no_slurm.out.find("sbatch: not found on PATH"), std::string::npos) << no_slurm.out;
  EXPECT_FALSE(fs::exists(runs / "a")) << "nothing may be planned without Slurm";
  const auto opt_alone = run_cli(base + " --slurm-opt=--partition=x --sweep-id b");
  EXPECT_EQ(opt_alone.exit_code, 2) << opt_alone.out;
  const auto shard = run_cli(base + " --executor slurm --shard 0/2 --sweep-id c");
  EXPECT_EQ(shard.exit_code, 2) << shard.out;
  EXPECT_NE(shard.out.find("--shards"), std::string::npos) << shard.out;

  // An sbatch that refuses the array (here a stand-in with sbatch's message): its words, exit 2,
  // and the way to submit the planned sweep again.
  const fs::path bin = runs / "fakebin";
  fs::create_directories(bin);
  for (const char* tool : {"sbatch", "squeue", "scancel"}) {
    std::ofstream f(bin / tool);
    f << "#!/bin/sh\necho 'sbatch: error: invalid partition specified: nope' >&2\nexit 1\n";
    f.close();
    fs::permissions(bin / tool, fs::perms::owner_all);
  }
  const auto refused = run_cli(base + " --executor slurm --slurm-opt=--partition=nope --sweep-id d",
                               true, "PATH=" + bin.string() + ":/usr/bin:/bin ");
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("invalid partition specified: nope"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("--sweep-id d --resume"), std::string::npos) << refused.out;
  EXPECT_TRUE(fs::exists(runs / "d" / "sweep_plan.json"));
}

// Counts below 1 or not whole numbers are refused while the command line is parsed: exit 2, the
// option and the value named, and nothing planned.
TEST(SweepCli, CountsBelowOneOrNotNumbersAreRefusedWithExit2) {
  const fs::path runs = fresh_runs_dir("sweep_counts");
  const std::string base = std::string("sweep ") + kScenario + " --seeds 0..1 --runs-dir " +
                           runs.string() + " --sweep-id c";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"-j 0", "-j"},          {"-j -3", "-j"},         {"-j two", "-j"},
      {"-j 1.5", "-j"},        {"--jobs=0", "--jobs"},  {"--repeat 0", "--repeat"},
      {"--repeat -1", "--repeat"}, {"--repeat 2.5", "--repeat"},
      {"--executor slurm --shards 0", "--shards"},
      {"--executor slurm --shards x", "--shards"},
      {"--executor slurm --slurm-poll 0", "--slurm-poll"},
      {"--executor slurm --slurm-poll -2", "--slurm-poll"},
      {"--executor slurm --slurm-poll soon", "--slurm-poll"}};
  for (const auto& [args, option] : bad) {
    const auto r = run_cli(base + " " + args, true, "PATH=/nonexistent ");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.out;
    EXPECT_NE(r.out.find(option), std::string::npos) << args << ": " << r.out;
    EXPECT_EQ(r.out.find("sbatch: not found"), std::string::npos)
        << args << ": refused after parsing, not at parse time: " << r.out;
  }
  EXPECT_FALSE(fs::exists(runs / "c")) << "nothing may be planned on a bad count";
}

// `fieldproof` is a small front (src/cli/front_main.cpp): `runs ...` and `--version` are served
// without the engine's libraries, every other command by fieldproof-core beside it.
TEST(FrontCli, RunsAndVersionAreServedWithoutTheEngineLibraries) {
  const std::string front = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
  const auto ldd = fieldproof::shell::run_shell("ldd " + front + " 2>&1");
  ASSERT_EQ(ldd.exit_code, 0) << ldd.out;
  for (const char* heavy : {"sdformat", "ignition", "libzmq", "protobuf", "yaml-cpp"}) {
    EXPECT_EQ(ldd.out.find(heavy), std::string::npos) << heavy << " is linked:\n" << ldd.out;
  }
  const auto version = run_cli("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("fieldproof ", 0), 0u) << version.out;
  // A core command through the front: the same arguments, exit code and output.
  const auto schema = run_cli("schema", false);
  EXPECT_EQ(schema.exit_code, 0);
  EXPECT_NE(schema.out.find("\"$schema\""), std::string::npos) << schema.out.substr(0, 200);
  const auto bad = run_cli("run /nonexistent/scenario.yaml");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("/nonexistent/scenario.yaml"), std::string::npos) << bad.out;
  const auto unknown = run_cli("runs nope");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  const auto help = run_cli("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("sweep"), std::string::npos) << "the core's help lists every command";
}

// The fork server (the default) and the exec fallback give every point the same result: the same
// verdict, reason and assertion verdicts, the same recording (message count, topics) and the same
// ground-truth samples; and each forked point says in its log that the sweep process had one
// thread when it forked.
TEST(SweepCli, ForkedAndExecdPointsGiveTheSameResults) {
  const fs::path runs = fresh_runs_dir("sweep_fork_exec");
  const auto sweep = [&](const std::string& id, const std::string& by) {
    return run_cli(std::string("sweep ") + kScenario + " --seeds 0..5 -j 2 --max-rtf 0 " +
                   "--points-by " + by + " --no-report --sweep-id " + id + " --runs-dir " +
                   runs.string());
  };
  const auto forked = sweep("fk", "fork");
  const auto execd = sweep("ex", "exec");
  // Seeds 0 and 4 fail the tolerance (quick_goal.yaml): both ways fail them.
  EXPECT_EQ(forked.exit_code, 1) << forked.out;
  EXPECT_EQ(execd.exit_code, 1) << execd.out;
  EXPECT_EQ(forked.out.find("started by exec"), std::string::npos) << forked.out;
  int failed = 0;
  for (int s = 0; s <= 5; ++s) {
    const std::string id = "s" + std::to_string(s);
    const json a = run_json(runs / "fk" / id);
    const json b = run_json(runs / "ex" / id);
    EXPECT_EQ(a["status"], b["status"]) << id;
    EXPECT_EQ(a["reason"], b["reason"]) << id;
    EXPECT_EQ(a["seed"], s);
    EXPECT_EQ(b["seed"], s);
    ASSERT_EQ(a["assertions"].size(), b["assertions"].size()) << id;
    for (size_t i = 0; i < a["assertions"].size(); ++i) {
      EXPECT_EQ(a["assertions"][i]["name"], b["assertions"][i]["name"]) << id;
      EXPECT_EQ(a["assertions"][i]["status"], b["assertions"][i]["status"]) << id;
      EXPECT_EQ(a["assertions"][i]["reason"], b["assertions"][i]["reason"]) << id;
    }
    ASSERT_TRUE(a.contains("recording")) << id;
    EXPECT_EQ(a["recording"]["messages"], b["recording"]["messages"]) << id;
    EXPECT_EQ(a["recording"]["topics"], b["recording"]["topics"]) << id;
    const auto poses = [](const fs::path& d) {
      // Ground truth without its wall-clock stamps (those differ between any two runs).
      std::vector<json> out;
      std::istringstream in(read_file(d / "samples.jsonl"));
      for (std::string line; std::getline(in, line);) {
        json j = json::parse(line);
        if (j.value("kind", "") != "pose") continue;
        j.erase("wall");
        out.push_back(j);
      }
      return out;
    };
    const auto pa = poses(runs / "fk" / id);
    EXPECT_GT(pa.size(), 20u) << id;
    EXPECT_EQ(pa, poses(runs / "ex" / id)) << id;
    if (a["status"] != "passed") ++failed;
    const std::string flog = read_file(runs / "fk" / "logs" / (id + ".log"));
    EXPECT_NE(flog.find(") forked by the sweep process"), std::string::npos) << flog;
    EXPECT_NE(flog.find("(1 thread at fork)"), std::string::npos) << flog;
    EXPECT_NE(flog.find("run directory: "), std::string::npos) << flog;
    const std::string elog = read_file(runs / "ex" / "logs" / (id + ".log"));
    EXPECT_EQ(elog.find("forked by the sweep"), std::string::npos) << elog;
  }
  EXPECT_EQ(failed, 2);
  const auto listed = run_cli("runs list --sweep fk --json --runs-dir " + runs.string(), false);
  EXPECT_EQ(parse(listed.out).size(), 6u) << listed.out;
}

// A forked point killed with SIGKILL loses only itself: the sweep goes on, the others finish,
// and the killed one is a failed point that --resume runs again.
TEST(SweepCli, AKilledForkedPointLosesOnlyItself) {
  const fs::path runs = fresh_runs_dir("sweep_fork_kill");
  const std::string bin = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
  const std::string dir = runs.string();
  // Paced at real time (--max-rtf 1), each point lasts seconds: time to kill one mid-run.
  std::vector<std::string> args = {bin, "sweep", kScenario, "--seeds", "0..3", "-j", "2",
                                   "--max-rtf", "1", "--no-report", "--sweep-id", "sw", "--runs-dir", dir};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, bin.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  // The first point's engine.log appears once its run has started; its pid is in its log.
  const fs::path log = runs / "sw" / "logs" / "s0.log";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string text;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(runs / "sw" / "s0" / "engine.log") && fs::exists(log)) {
      text = read_file(log);
      if (text.find(") forked by the sweep") != std::string::npos) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_NE(text.find(") forked by the sweep"), std::string::npos) << text;
  const size_t at = text.find("(pid ");
  ASSERT_NE(at, std::string::npos) << text;
  const pid_t point = static_cast<pid_t>(std::stol(text.substr(at + 5)));
  ASSERT_GT(point, 1);
  const bool s0_done_before = fs::exists(runs / "sw" / "s0" / "run.json");
  ASSERT_EQ(kill(point, SIGKILL), 0);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 1);
  for (int s = 1; s <= 3; ++s) {
    EXPECT_TRUE(fs::exists(runs / "sw" / ("s" + std::to_string(s)) / "run.json")) << s;
  }
  if (!s0_done_before) {
    EXPECT_FALSE(fs::exists(runs / "sw" / "s0" / "run.json"));
    const auto resumed = run_cli(std::string("sweep ") + kScenario +
                                 " --sweep-id sw --resume --max-rtf 0 --no-report --runs-dir " + dir);
    EXPECT_TRUE(fs::exists(runs / "sw" / "s0" / "run.json")) << resumed.out;
  }
}
