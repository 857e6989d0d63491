// `fieldproof sweep --executor slurm` on a real single-node Slurm (label slurm): the test starts
// its own munged, slurmctld and slurmd (slurm_cluster.hpp), runs a sweep through a job array and
// checks it gives what the local pool gives; Ctrl-C scancels the array. Where the daemons cannot
// start (not root, slurm-wlm or munge missing) each test says why and is skipped.
#include <spawn.h>

#include <map>
#include <set>

#include "fleet/slurm_cluster.hpp"
#include "integration/cli_test_util.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using fieldproof::integration::fresh_runs_dir;
using fieldproof::integration::read_file;
using fieldproof::integration::run_cli;
using fieldproof::integration::run_json;
using fieldproof::testing::SlurmCluster;

namespace {

constexpr const char* kScenario = "tests/fleet/data/quick_goal.yaml";

std::unique_ptr<SlurmCluster> start_cluster(const std::string& name, std::string* why) {
  return SlurmCluster::start(fresh_runs_dir(name, "slurmd_"), why);
}

}  // namespace

TEST(SlurmSweep, AJobArrayGivesTheLocalPoolsResultsAndIsIndexed) {
  std::string why;
  const auto cluster = start_cluster("same", &why);
  if (!cluster) GTEST_SKIP() << why;
  const fs::path runs = fresh_runs_dir("slurm_same");
  const std::string sweep = std::string("sweep ") + kScenario +
                            " --seeds 0..4 --max-rtf 0 --runs-dir " + runs.string();
  const auto local = run_cli(sweep + " -j 2 --sweep-id loc");
  // Five points in three shards: tasks 0..2 run points {0,3}, {1,4}, {2}.
  const auto slurm = run_cli(sweep + " --executor slurm --shards 3 --slurm-poll 0.2 "
                                     "--slurm-opt=--job-name=fp-test --sweep-id sl",
                             true, cluster->env_prefix());
  ASSERT_TRUE(cluster->alive()) << "a daemon died during the sweep";
  EXPECT_EQ(local.exit_code, 1) << local.out;  // seeds 0 and 4 fail the tight tolerance
  EXPECT_EQ(slurm.exit_code, local.exit_code) << slurm.out;
  EXPECT_NE(slurm.out.find("Slurm job array"), std::string::npos) << slurm.out;

  // Every point: the same verdict and the same assertion outcomes as the local pool's.
  for (int s = 0; s <= 4; ++s) {
    const std::string id = "s" + std::to_string(s);
    ASSERT_TRUE(fs::exists(runs / "sl" / id / "run.json")) << id << "\n" << slurm.out;
    const json a = run_json(runs / "loc" / id), b = run_json(runs / "sl" / id);
    EXPECT_EQ(b["status"], a["status"]) << id;
    EXPECT_EQ(b["seed"], s);
    ASSERT_EQ(b["assertions"].size(), a["assertions"].size()) << id;
    for (size_t i = 0; i < a["assertions"].size(); ++i) {
      EXPECT_EQ(b["assertions"][i]["status"], a["assertions"][i]["status"]) << id;
    }
  }
  const json lr = json::parse(read_file(runs / "loc" / "sweep.json"));
  const json sr = json::parse(read_file(runs / "sl" / "sweep.json"));
  for (const char* k : {"planned", "finished", "passed", "failed", "not_run"}) {
    EXPECT_EQ(sr["summary"][k], lr["summary"][k]) << k;
  }

  // The points ran as the array's tasks: one job, its three task logs, Slurm's own record.
  const json jobs = json::parse(read_file(runs / "sl" / "slurm" / "jobs.json"));
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  const std::string job = jobs["jobs"][0]["job_id"];
  EXPECT_EQ(jobs["jobs"][0]["array"], "0-2");
  for (int t = 0; t < 3; ++t) {
    EXPECT_TRUE(fs::exists(runs / "sl" / "slurm" / ("task-" + job + "_" + std::to_string(t) + ".log")))
        << t;
  }
  const std::string shown = cluster->client("scontrol show job -o " + job);
  EXPECT_NE(shown.find("JobName=fp-test"), std::string::npos) << shown;  // --slurm-opt passed
  EXPECT_NE(shown.find("ArrayTaskId=2"), std::string::npos) << shown;

  // The index was gathered: every point, under its sweep.
  const auto listed = run_cli("runs list --sweep sl --json --runs-dir " + runs.string(), false);
  ASSERT_EQ(listed.exit_code, 0);
  const json rows = json::parse(listed.out);
  EXPECT_EQ(rows.size(), 5u);
  std::set<std::string> failed;
  for (const json& r : rows) {
    if (r["status"] != "passed") failed.insert(r["point_id"].get<std::string>());
  }
  EXPECT_EQ(failed, (std::set<std::string>{"s0", "s4"}));

  // A resumed sweep with nothing left submits nothing.
  const auto again = run_cli(std::string("sweep ") + kScenario + " --executor slurm --resume "
                             "--sweep-id sl --slurm-poll 0.2 --runs-dir " + runs.string(),
                             true, cluster->env_prefix());
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_EQ(json::parse(read_file(runs / "sl" / "slurm" / "jobs.json"))["jobs"].size(), 1u);
}

TEST(SlurmSweep, CtrlCScancelsTheArrayAndKeepsTheFinishedPoints) {
  std::string why;
  const auto cluster = start_cluster("cancel", &why);
  if (!cluster) GTEST_SKIP() << why;
  const fs::path runs = fresh_runs_dir("slurm_cancel");
  const std::string bin = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
  // Paced at 1x, each point takes seconds of wall time: the array is still running when
  // interrupted.
  std::vector<std::string> args = {bin, "sweep", kScenario, "--seeds", "0..5", "--max-rtf", "1",
                                   "--executor", "slurm", "--shards", "2", "--slurm-poll", "0.2",
                                   "--sweep-id", "sw", "--runs-dir", runs.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) env_text.push_back(*e);
  env_text.push_back("SLURM_CONF=" + cluster->conf().string());
  std::vector<char*> env;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, bin.c_str(), nullptr, nullptr, argv.data(), env.data()), 0);
  // Once a point of the array has started (its run directory has an engine log), Ctrl-C.
  const bool started = cluster->wait_for(
      [&] { return fs::exists(runs / "sw" / "s0" / "engine.log") ||
                   fs::exists(runs / "sw" / "s1" / "engine.log"); },
      60);
  kill(pid, SIGINT);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(started) << "no point started within 60 s";
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130);
  const json jobs = json::parse(read_file(runs / "sw" / "slurm" / "jobs.json"));
  const std::string job = jobs["jobs"][0]["job_id"];
  EXPECT_EQ(cluster->client("squeue -h -j " + job), "") << "the array is still queued";
  const std::string shown = cluster->client("scontrol show job -o " + job);
  EXPECT_NE(shown.find("JobState=CANCELLED"), std::string::npos) << shown;
  int finished = 0;
  for (int s = 0; s <= 5; ++s) {
    const fs::path d = runs / "sw" / ("s" + std::to_string(s));
    if (fs::exists(d / "run.json") && run_json(d)["status"] != "interrupted") ++finished;
  }
  EXPECT_LT(finished, 6) << "every point finished: the sweep was not interrupted";
}
