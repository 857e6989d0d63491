// The Slurm executor (slurm.hpp): plan here, one sbatch array over shards, follow, gather.
#include "fieldproof/fleet/slurm.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "fieldproof/fleet/run_index.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/spawn.hpp"

namespace fieldproof::fleet {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct CommandResult {
  int exit_code = -1;  // 127: could not be started
  std::string out;
  std::string err;
};

// Runs argv (argv[0] looked up on PATH) in a process group of its own, so a Ctrl-C meant for the
// sweep does not end the scancel that answers it; stdout and stderr captured.
CommandResult run_command(const std::vector<std::string>& argv) {
  CommandResult r;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return r;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return r;
  }
  util::SpawnOptions o;
  o.stdout_to = util::Redirect::to_fd(out_pipe[1]);
  o.stderr_to = util::Redirect::to_fd(err_pipe[1]);
  o.stdin_from_null = true;
  o.new_process_group = true;
  o.default_signals = true;
  o.search_path = true;
  const util::Spawned s = util::spawn_process(argv, o);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!s.ok()) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    r.exit_code = 127;
    r.err = s.error;
    return r;
  }
  const pid_t pid = s.pid;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return r;
}

bool on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (!dir.empty() && ::access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string sh_quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t a = 0;
  while (a < s.size() && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  return s.substr(a);
}

int exit_of(const std::string& code) {  // "1:0" -> 1
  return std::atoi(code.substr(0, code.find(':')).c_str());
}

// Waits up to `seconds` of wall time (SystemClock's), returning early once `interrupt` is set.
void pause(double seconds, const std::atomic<bool>* interrupt) {
  const WallNow wall = SystemClock::wall_now();
  const SimTime until = wall() + Duration::from_ns(static_cast<int64_t>(seconds * 1e9));
  for (SimTime now = wall(); now < until; now = wall()) {
    if (interrupt && interrupt->load()) return;
    const int64_t left_ms = (until - now).ns() / 1'000'000 + 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(left_ms, 50)));
  }
}

}  // namespace

std::string array_ranges(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

std::vector<SlurmTaskState> parse_sacct(const std::string& text) {
  std::vector<SlurmTaskState> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    std::vector<std::string> f;
    std::stringstream ls(trim(line));
    std::string field;
    while (std::getline(ls, field, '|')) f.push_back(field);
    if (f.size() < 3) continue;
    const size_t us = f[0].find('_');
    if (us == std::string::npos || f[0].find('.') != std::string::npos) continue;
    const std::string task = f[0].substr(us + 1);
    if (task.empty() || task.find_first_not_of("0123456789") != std::string::npos) continue;
    SlurmTaskState s;
    s.task = std::atoi(task.c_str());
    s.state = f[1].substr(0, f[1].find(' '));  // "CANCELLED by 0"
    s.exit_code = exit_of(f[2]);
    out.push_back(s);
  }
  return out;
}

std::vector<SlurmTaskState> parse_scontrol_jobs(const std::string& text) {
  std::vector<SlurmTaskState> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    SlurmTaskState s;
    std::stringstream ls(line);
    std::string word;
    bool have_task = false;
    while (ls >> word) {
      const size_t eq = word.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "ArrayTaskId" && !value.empty() &&
          value.find_first_not_of("0123456789") == std::string::npos) {
        s.task = std::atoi(value.c_str());
        have_task = true;
      } else if (key == "JobState") {
        s.state = value;
      } else if (key == "ExitCode") {
        s.exit_code = exit_of(value);
      }
    }
    if (have_task && !s.state.empty()) out.push_back(s);
  }
  return out;
}

namespace {

// Every finished point of the sweep into <runs>/index.sqlite, in one transaction.
void gather_index(const fs::path& runs_dir, const fs::path& dir, const std::string& sweep_id,
                  const json& plan, std::vector<std::string>* warnings) {
  const json& points = plan["points"];
  const auto warn = [warnings](const Status& s) {
    warnings->push_back("run index: " + s.message() + " (`fieldproof runs reindex` rebuilds it)");
  };
  const Result<std::unique_ptr<RunIndex>> opened = RunIndex::open(runs_dir / "index.sqlite");
  if (!opened.ok()) return warn(opened.status());
  RunIndex& idx = **opened;
  if (Status s = idx.begin(); !s.ok()) return warn(s);
  SweepRow row{sweep_id, plan["scenario"].value("name", ""), plan["scenario"].value("file", ""),
               plan.value("created_utc", ""), static_cast<int64_t>(points.size()), plan};
  Status s = idx.add_sweep(row);
  for (const json& p : points) {
    const fs::path pdir = dir / p.value("id", "");
    std::error_code ec;
    if (s.ok() && fs::exists(pdir / "run.json", ec)) s = idx.add_run(pdir);
  }
  if (s.ok()) s = idx.commit();
  if (!s.ok()) warn(s);
}

// The batch script of one submission, <sweep>/slurm/submit-<n>.sbatch: every path absolute, since
// the tasks start in Slurm's working directory. Nothing when it cannot be written.
std::optional<fs::path> write_batch_script(const fs::path& sdir, const json& plan,
                                           const std::string& sweep_id, const fs::path& runs_dir,
                                           const fs::path& fieldproof, int shards) {
  std::error_code ec;
  fs::create_directories(sdir, ec);
  int submission = 1;
  while (fs::exists(sdir / ("submit-" + std::to_string(submission) + ".sbatch"), ec)) ++submission;
  const fs::path script = sdir / ("submit-" + std::to_string(submission) + ".sbatch");
  {
    std::ofstream s(script);
    s << "#!/bin/sh\n"
      << "# fieldproof sweep " << sweep_id << ": one array task per shard of the points ("
      << shards << " shards; written by `fieldproof sweep --executor slurm`).\n"
      << "cd " << sh_quote(plan.value("cwd", "/")) << " 2>/dev/null || cd /\n"
      << "exec " << sh_quote(fieldproof.string()) << " sweep "
      << sh_quote(plan["scenario"].value("path", "")) << " --sweep-id " << sh_quote(sweep_id)
      << " --resume --runs-dir " << sh_quote(runs_dir.string()) << " --shard \"${SLURM_ARRAY_TASK_ID}/"
      << shards << "\""
      << " -j \"${SLURM_CPUS_PER_TASK:-1}\" --no-report\n";
    if (!s) return std::nullopt;
  }
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read,
                  ec);
  return script;
}

// Appends a submission to <sweep>/slurm/jobs.json (the job id, its array and the sbatch argv).
void record_submission(const fs::path& sdir, const std::string& job, const std::string& array,
                       int shards, const fs::path& script, const std::vector<std::string>& argv) {
  json jobs = json::array();
  if (const Result<json> j = read_json_object(sdir / "jobs.json"); j.ok()) {
    if (j->contains("jobs")) jobs = (*j)["jobs"];
  }
  jobs.push_back({{"job_id", job},
                  {"array", array},
                  {"shards", shards},
                  {"script", script.string()},
                  {"sbatch", argv},
                  {"submitted_utc", format_utc(SystemClock::utc_now()())}});
  std::ofstream(sdir / "jobs.json") << json{{"jobs", jobs}}.dump(2) << '\n';
}

// The array's tasks still in the queue (squeue), or that it has left it.
struct QueueState {
  bool gone = false;
  size_t running = 0;
  std::string error;  // squeue's complaint, when it failed for another reason
};

QueueState query_queue(const SlurmOptions& slurm, const std::string& job) {
  QueueState st;
  const CommandResult q = run_command({slurm.squeue, "-h", "-r", "-j", job, "-o", "%i|%T"});
  if (q.exit_code == 0) {
    size_t queued = 0;
    std::stringstream ss(q.out);
    std::string line;
    while (std::getline(ss, line)) {
      if (trim(line).empty()) continue;
      ++queued;
      if (line.find("|RUNNING") != std::string::npos) ++st.running;
    }
    st.gone = queued == 0;
  } else if (q.err.find("Invalid job id") != std::string::npos) {
    st.gone = true;  // purged from the controller already
  } else {
    st.error = trim(q.err);
  }
  return st;
}

// A warning for each task that did not end with a verdict (a task's fieldproof sweep exits 1
// when one of its points failed: that is a verdict, not a failure of the task).
void warn_failed_tasks(const std::vector<SlurmTaskState>& states, const std::string& job,
                       const std::string& source, const fs::path& sdir,
                       std::vector<std::string>* warnings) {
  for (const SlurmTaskState& s : states) {
    const bool ok = s.state == "COMPLETED" || (s.state == "FAILED" && s.exit_code == 1);
    if (ok) continue;
    warnings->push_back("array task " + job + "_" + std::to_string(s.task) + " ended " + s.state +
                        " (exit " + std::to_string(s.exit_code) + ", " + source + "); its log: " +
                        (sdir / ("task-" + job + "_" + std::to_string(s.task) + ".log")).string());
  }
}

// What --executor slurm refuses before anything is planned (exit 2), or nothing.
std::optional<std::string> refuse_slurm_options(const SweepOptions& options,
                                                const SlurmOptions& slurm) {
  if (slurm.shards < 0) return std::string("--shards must be at least 1");
  if (!(slurm.poll_s > 0) || !std::isfinite(slurm.poll_s)) {
    return std::string("--slurm-poll must be a number of seconds above 0");
  }
  if (options.shard_count != 1) {
    return std::string(
        "--shard I/N is a task's share of a sweep; --executor slurm makes the shards itself "
        "(--shards N)");
  }
  for (const std::string* p : {&slurm.sbatch, &slurm.squeue, &slurm.scancel}) {
    if (!on_path(*p)) {
      return *p + ": not found on PATH; --executor slurm needs Slurm's client commands "
                  "(sbatch, squeue, scancel; Debian's slurm-client) on a host of the cluster";
    }
  }
  return std::nullopt;
}

// The tasks' final states: sacct where accounting is on, else the controller's memory.
std::vector<SlurmTaskState> final_task_states(const SlurmOptions& slurm, const std::string& job,
                                              std::string* source) {
  std::vector<SlurmTaskState> states;
  if (on_path(slurm.sacct)) {
    const CommandResult a = run_command(
        {slurm.sacct, "-n", "-P", "-X", "-j", job, "-o", "JobID,State,ExitCode"});
    if (a.exit_code == 0) {
      states = parse_sacct(a.out);
      *source = "sacct";
    }
  }
  if (states.empty()) {
    const CommandResult c = run_command({slurm.scontrol, "show", "job", "-o", job});
    if (c.exit_code == 0) {
      states = parse_scontrol_jobs(c.out);
      *source = "scontrol";
    }
  }
  std::sort(states.begin(), states.end(),
            [](const SlurmTaskState& a, const SlurmTaskState& b) { return a.task < b.task; });
  return states;
}

// Submits the sweep's job array with sbatch. Returns the job id, with *argv the command line;
// "" when sbatch refused it, with *argv's last element replaced by why (exit code, output).
std::string submit_array(const SlurmOptions& slurm, const std::string& sweep_id,
                         const std::string& array, const fs::path& sdir, const fs::path& script,
                         std::vector<std::string>* argv) {
  *argv = {slurm.sbatch,
           "--parsable",
           "--job-name=fieldproof-" + sweep_id,
           "--array=" + array,
           "--output=" + (sdir / "task-%A_%a.log").string(),
           "--chdir=" + sdir.string()};
  for (const auto& opt : slurm.sbatch_options) argv->push_back(opt);
  argv->push_back(script.string());
  const CommandResult sub = run_command(*argv);
  const std::string job = trim(sub.out.substr(0, sub.out.find(';')));
  if (sub.exit_code != 0 || job.empty() ||
      job.find_first_not_of("0123456789") != std::string::npos) {
    argv->back() = "(exit " + std::to_string(sub.exit_code) + "): " + trim(sub.err + sub.out);
    return "";
  }
  return job;
}

// Follows the job with squeue until the array has left the queue, with progress from the run
// directories (tally); an interrupt cancels it (scancel) and waits up to 10 min for it to leave.
// Returns whether it was cancelled.
bool follow_job(const SlurmOptions& slurm, const std::string& job, const SweepOptions& options,
                const std::function<void()>& tally, SweepProgress* progress,
                std::vector<std::string>* warnings) {
  SweepProgress& pr = *progress;
  const WallNow wall = SystemClock::wall_now();
  const SimTime t0 = wall();
  const size_t done_before = pr.done;
  const auto interrupted = [&] { return options.interrupt && options.interrupt->load(); };
  bool cancelled = false;
  std::string last_squeue_error;
  const auto cancel_deadline_s = 600.0;
  double cancelled_at = 0;
  for (;;) {
    const QueueState q = query_queue(slurm, job);
    const bool gone = q.gone;
    const size_t running = q.running;
    if (!q.error.empty()) last_squeue_error = q.error;
    tally();
    pr.running = running;
    const double el = static_cast<double>((wall() - t0).ns()) / 1e9;
    const size_t ran = pr.done - std::min(pr.done, done_before);
    pr.rate = el > 0 && ran > 0 ? static_cast<double>(ran) / el : 0;
    pr.eta_s = pr.rate > 0 ? static_cast<double>(pr.total - pr.done) / pr.rate : 0;
    if (options.on_progress) options.on_progress(pr);
    if (gone) break;
    if (interrupted() && !cancelled) {
      const CommandResult c = run_command({slurm.scancel, job});
      if (c.exit_code != 0) warnings->push_back("scancel " + job + ": " + trim(c.err));
      cancelled = true;
      cancelled_at = el;
    }
    if (cancelled && el - cancelled_at > cancel_deadline_s) {
      warnings->push_back("job " + job + " was cancelled but is still in the queue after " +
                          std::to_string(static_cast<int>(cancel_deadline_s)) + " s");
      break;
    }
    pause(cancelled ? std::min(slurm.poll_s, 0.5) : slurm.poll_s,
          cancelled ? nullptr : options.interrupt);
  }
  if (!last_squeue_error.empty()) warnings->push_back("squeue: " + last_squeue_error);
  return cancelled;
}

}  // namespace

SweepOutcome run_sweep_slurm(const SweepOptions& options, const SlurmOptions& slurm) {
  SweepOutcome out;
  const auto invalid = [&out](std::vector<std::string> e) {
    out.exit_code = 2;
    out.errors = std::move(e);
    return out;
  };
  if (auto e = refuse_slurm_options(options, slurm)) return invalid({*e});

  // Validate and plan exactly as the local pool does; nothing runs here.
  SweepOptions po = options;
  po.plan_only = true;
  po.on_progress = nullptr;
  SweepOutcome planned = run_sweep(po);
  if (planned.exit_code == 2) return planned;
  out = planned;
  out.exit_code = 0;
  const json& plan = planned.plan;
  const json& points = plan["points"];
  const fs::path dir = fs::absolute(planned.dir).lexically_normal();
  const fs::path runs_dir = dir.parent_path();
  out.dir = planned.dir;
  SweepProgress& pr = out.progress;
  if (options.on_progress) options.on_progress(pr);

  const int n_points = static_cast<int>(points.size());
  const int shards =
      slurm.shards > 0 ? std::min(slurm.shards, std::max(1, n_points))
                       : std::max(1, std::min(n_points, kDefaultMaxShards));
  std::set<int> task_set;
  for (const size_t pos : planned.pending) task_set.insert(static_cast<int>(pos % shards));
  const std::vector<int> tasks(task_set.begin(), task_set.end());

  const auto gather = [&] { gather_index(runs_dir, dir, out.sweep_id, plan, &out.warnings); };
  std::map<std::string, bool> verdicts;
  const auto tally = [&] {
    add_finished_points(dir, plan, &verdicts);
    pr.done = verdicts.size();
    pr.passed = static_cast<size_t>(std::count_if(verdicts.begin(), verdicts.end(),
                                                  [](const auto& v) { return v.second; }));
    pr.failed = pr.done - pr.passed;
    out.failing.clear();
    for (const json& p : points) {
      const auto it = verdicts.find(p.value("id", ""));
      if (it != verdicts.end() && !it->second) out.failing.push_back(it->first);
    }
  };

  if (tasks.empty()) {  // a resumed sweep with nothing left
    tally();
    gather();
    out.exit_code = pr.failed == 0 ? 0 : 1;
    return out;
  }

  const fs::path sdir = dir / "slurm";
  const std::optional<fs::path> script =
      write_batch_script(sdir, plan, out.sweep_id, runs_dir, fs::absolute(options.fieldproof),
                         shards);
  if (!script) return invalid({(sdir / "submit-N.sbatch").string() + ": cannot be written"});
  std::string array = array_ranges(tasks);
  if (slurm.max_running > 0) array += "%" + std::to_string(slurm.max_running);
  std::vector<std::string> argv;
  const std::string job = submit_array(slurm, out.sweep_id, array, sdir, *script, &argv);
  if (job.empty()) {
    return invalid({"sbatch refused the sweep's job array " + argv.back(),
                    "the sweep is planned in " + dir.string() +
                        "; fix the --slurm-opt values "
                        "and submit it again with --sweep-id " +
                        out.sweep_id + " --resume"});
  }
  record_submission(sdir, job, array, shards, *script, argv);
  out.warnings.clear();
  out.slurm_job_id = job;

  const bool cancelled = follow_job(slurm, job, options, tally, &pr, &out.warnings);

  std::string source;
  const std::vector<SlurmTaskState> states = final_task_states(slurm, job, &source);
  if (!cancelled) warn_failed_tasks(states, job, source, sdir, &out.warnings);

  tally();
  gather();
  out.progress.running = 0;
  if (cancelled) {
    out.exit_code = 130;
  } else if (pr.done < pr.total) {
    out.exit_code = 1;
    out.warnings.push_back(std::to_string(pr.total - pr.done) +
                           " point(s) did not finish (the task logs in " + sdir.string() +
                           " say why); --resume submits them again");
  } else {
    out.exit_code = pr.failed == 0 ? 0 : 1;
  }
  return out;
}

}  // namespace fieldproof::fleet
