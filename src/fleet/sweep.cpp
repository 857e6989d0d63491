// `fieldproof sweep` (sweep.hpp): plan, validate, run the points as child processes.
#include "fieldproof/fleet/sweep.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "fieldproof/engine/plan.hpp"
#include "fieldproof/engine/run.hpp"
#include "fieldproof/fleet/run_index.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/spawn.hpp"

namespace fieldproof::fleet {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int64_t kMaxSeed = 2147483647;

std::optional<int64_t> parse_int(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty();
  for (const char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-./=:,[]@+").find(c) !=
                                                             std::string_view::npos)) {
      plain = false;
    }
  }
  if (plain) return s;
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string fmt_num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

Status write_json_file(const fs::path& p, const json& j) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << '\n';
    if (!out) return {StatusCode::kIoError, tmp.string() + ": cannot be written"};
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) return {StatusCode::kIoError, p.string() + ": " + ec.message()};
  return {};
}

// A child `fieldproof run`, in its own process group, output to `log`.
Result<pid_t> spawn(const std::vector<std::string>& argv, const fs::path& log) {
  util::SpawnOptions o;
  o.stdout_to = util::Redirect::file(log.string());
  o.stderr_to = util::Redirect::same_as_stdout();
  o.stdin_from_null = true;
  o.new_process_group = true;
  o.default_signals = true;
  const util::Spawned s = util::spawn_process(argv, o);
  if (!s.ok()) return Status(StatusCode::kUnavailable, s.error);
  return s.pid;
}

// The threads of this process: fork() copies only the calling one, so a thread holding a lock
// (a ZeroMQ context's, a logger's) would leave the child a lock nobody releases.
size_t thread_count() {
  std::error_code ec;
  size_t n = 0;
  for (fs::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}

std::atomic<bool> g_point_interrupted{false};
extern "C" void on_point_signal(int) { g_point_interrupted.store(true); }

// The forked point: its own process group, default signals but SIGINT/SIGTERM ending the run as
// interrupted (as `fieldproof run` does), output to its log, then the normal run code path. It
// leaves by _exit: the sweep's stdio buffers and static objects are the parent's to flush.
// `recorded_fd`: the write end of the pipe the sweep reads; one byte once run.json is written (the
// point's slot is then free), end of file when the point's process ends.
[[noreturn]] void run_forked_point(const fs::path& log, engine::RunOptions ro, size_t threads,
                                   int recorded_fd) {
  ::setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || in < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0 || ::dup2(in, 0) < 0) _exit(127);
  ::close(fd);
  ::close(in);
  struct sigaction sa {};
  sa.sa_handler = on_point_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  g_point_interrupted.store(false);
  ro.interrupt = &g_point_interrupted;
  ro.on_recorded = [recorded_fd] {
    const char done = 'r';
    while (::write(recorded_fd, &done, 1) < 0 && errno == EINTR) {
    }
  };
  std::fprintf(stderr, "fieldproof sweep: point (pid %d) forked by the sweep process %d (%zu thread at fork)\n",
               static_cast<int>(::getpid()), static_cast<int>(::getppid()), threads);
  int code = 1;
  try {
    const engine::RunOutcome r = engine::run_scenario(ro);
    code = r.exit_code;
    if (r.exit_code == 2) {
      for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.c_str());
    } else {
      std::printf("%s: %s (%s)\n", r.verdict.c_str(), r.reason.c_str(), r.status.c_str());
      for (const auto& as : r.assertions) {
        std::printf("  %-8s %s (%s): %s\n", std::string(engine::to_string(as.status)).c_str(),
                    as.name.c_str(), as.type.c_str(), as.reason.c_str());
      }
      std::printf("run directory: %s\n", r.run_dir.string().c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fieldproof: internal error: %s (please report it)\n", e.what());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

// A point is finished when its run directory has a run.json that is not an interruption.
std::optional<json> finished_run(const fs::path& dir) {
  Result<json> run = read_json_object(dir / "run.json");
  if (!run.ok() || run->value("status", "") == "interrupted") return std::nullopt;
  return std::move(run).value();
}

}  // namespace

Result<std::vector<int64_t>> parse_seed_range(const std::string& text) {
  const auto invalid = [](std::string m) {
    return Status(StatusCode::kInvalidArgument, std::move(m));
  };
  const size_t dots = text.find("..");
  std::optional<int64_t> a, b;
  if (dots == std::string::npos) {
    a = b = parse_int(text);
  } else {
    a = parse_int(std::string_view(text).substr(0, dots));
    b = parse_int(std::string_view(text).substr(dots + 2));
  }
  if (!a || !b)
    return invalid("--seeds '" + text + "': expected A..B (inclusive) or N, with whole numbers");
  if (*a < 0 || *b > kMaxSeed) {
    return invalid("--seeds '" + text + "': a seed is between 0 and 2147483647 (2^31-1)");
  }
  if (*a > *b) {
    return invalid("--seeds '" + text + "': the range is empty (" + std::to_string(*a) + " > " +
                   std::to_string(*b) + ")");
  }
  std::vector<int64_t> out;
  for (int64_t s = *a; s <= *b; ++s) out.push_back(s);
  return out;
}

Result<std::vector<int64_t>> read_seed_list(const fs::path& file) {
  std::ifstream in(file);
  if (!in)
    return Status(StatusCode::kIoError,
                  file.string() + ": cannot read the seed list (does it exist?)");
  std::vector<int64_t> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto v = parse_int(line);
    if (!v || *v < 0 || *v > kMaxSeed) {
      return Status(StatusCode::kInvalidArgument,
                    file.string() + ":" + std::to_string(n) + ": '" + line +
                        "' is not a seed (a whole number 0 to 2147483647)");
    }
    out.push_back(*v);
  }
  if (out.empty())
    return Status(StatusCode::kInvalidArgument, file.string() + ": the seed list is empty");
  return out;
}

Result<SweepParam> parse_param(const std::string& text) {
  const auto invalid = [](std::string m) {
    return Status(StatusCode::kInvalidArgument, std::move(m));
  };
  const auto o = scenario::parse_override(text);
  if (!o.ok()) return invalid("--param " + o.status().message());
  SweepParam p{o->path, {}};
  std::stringstream ss(o->value);
  std::string v;
  while (std::getline(ss, v, ',')) {
    if (v.empty())
      return invalid("--param '" + text + "': an empty value (two commas, or a comma at an end)");
    p.values.push_back(v);
  }
  if (!o->value.empty() && o->value.back() == ',') {
    return invalid("--param '" + text + "': an empty value (a comma at the end)");
  }
  return p;
}

Result<std::vector<int64_t>> collect_seeds(const std::vector<std::string>& ranges,
                                           const fs::path& list) {
  std::vector<int64_t> all;
  for (const auto& r : ranges) {
    Result<std::vector<int64_t>> seeds = parse_seed_range(r);
    if (!seeds.ok()) return seeds.status();
    all.insert(all.end(), seeds->begin(), seeds->end());
  }
  if (!list.empty()) {
    Result<std::vector<int64_t>> seeds = read_seed_list(list);
    if (!seeds.ok()) return seeds.status();
    all.insert(all.end(), seeds->begin(), seeds->end());
  }
  std::vector<int64_t> unique;
  std::set<int64_t> seen;
  for (const int64_t s : all) {
    if (seen.insert(s).second) unique.push_back(s);
  }
  return unique;
}

Result<Shard> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  const std::optional<int64_t> i = slash == std::string::npos
                                       ? std::nullopt
                                       : parse_int(std::string_view(text).substr(0, slash));
  const std::optional<int64_t> n = slash == std::string::npos
                                       ? std::nullopt
                                       : parse_int(std::string_view(text).substr(slash + 1));
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (!i || !n || *i < -kMax || *i > kMax || *n < -kMax || *n > kMax) {
    return Status(StatusCode::kInvalidArgument,
                  "--shard '" + text + "': expected I/N (0 <= I < N)");
  }
  return Shard{static_cast<int>(*i), static_cast<int>(*n)};
}

json SweepPoint::to_json() const {
  json ov = json::array();
  for (const auto& o : overrides) ov.push_back({{"path", o.path}, {"value", o.value}});
  return {{"id", id},
          {"seed", seed},
          {"overrides", ov},
          {"combination", combination},
          {"repetition", repetition}};
}

std::vector<SweepPoint> expand(const SweepSpec& spec) {
  std::vector<std::vector<scenario::Override>> combos{{}};
  for (const SweepParam& p : spec.params) {
    std::vector<std::vector<scenario::Override>> next;
    for (const auto& c : combos) {
      for (const auto& v : p.values) {
        auto n = c;
        n.push_back({p.path, v});
        next.push_back(std::move(n));
      }
    }
    combos = std::move(next);
  }
  std::vector<SweepPoint> out;
  for (size_t c = 0; c < combos.size(); ++c) {
    for (const int64_t seed : spec.seeds) {
      for (int r = 0; r < std::max(1, spec.repeat); ++r) {
        SweepPoint p;
        p.id = "s" + std::to_string(seed);
        if (!spec.params.empty()) p.id += "-p" + std::to_string(c);
        if (spec.repeat > 1) p.id += "-r" + std::to_string(r);
        p.seed = seed;
        p.overrides = combos[c];
        p.combination = c;
        p.repetition = r;
        out.push_back(std::move(p));
      }
    }
  }
  return out;
}

std::string reproduce_command(const json& plan, const json& point) {
  std::string cmd = "fieldproof run " +
                    shell_quote(plan.value("scenario", json::object()).value("file", "")) +
                    " --seed " + std::to_string(point.value("seed", int64_t{0}));
  for (const json& o : point.value("overrides", json::array())) {
    cmd += " --set " + shell_quote(o.value("path", "") + "=" + o.value("value", ""));
  }
  if (plan.contains("max_rtf") && plan["max_rtf"].is_number()) {
    cmd += " --max-rtf " + fmt_num(plan["max_rtf"].get<double>());
  }
  return cmd;
}

std::string SweepProgress::line() const {
  char b[160];
  std::string eta = "ETA -";
  if (eta_s > 0) {
    const long s = std::lround(eta_s);
    eta = s >= 3600 ? "ETA " + std::to_string(s / 3600) + "h" + std::to_string(s % 3600 / 60) + "m"
          : s >= 60 ? "ETA " + std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s"
                    : "ETA " + std::to_string(s) + "s";
  } else if (done == total) {
    eta = "done";
  }
  std::snprintf(b, sizeof b, "%zu/%zu points  %zu passed  %zu failed  %.2f/s  %s", done, total,
                passed, failed, rate, eta.c_str());
  return b;
}

namespace {

// The options' own checks, before the scenario is read: the first that fails, or nothing.
std::vector<std::string> option_errors(const SweepOptions& o) {
  const SweepSpec& spec = o.spec;
  std::error_code ec;
  if (!fs::exists(spec.scenario_file, ec)) {
    return {spec.scenario_file.string() + ": cannot read the scenario file (does it exist?)"};
  }
  if (o.jobs < 1) return {"-j must be at least 1"};
  if (spec.repeat < 1) return {"--repeat must be at least 1"};
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count) {
    return {"--shard I/N: 0 <= I < N"};
  }
  if (spec.max_rtf && (*spec.max_rtf < 0 || !std::isfinite(*spec.max_rtf))) {
    return {"--max-rtf must be >= 0 (0 = unpaced)"};
  }
  if (spec.seeds.empty() && !o.resume) return {"no seeds: give --seeds A..B or --seeds-list FILE"};
  std::set<std::string> paths;
  for (const auto& p : spec.params) {
    if (!paths.insert(p.path).second) return {"--param " + p.path + " is given twice"};
    if (p.values.empty()) return {"--param " + p.path + ": no values"};
  }
  return {};
}

// The scenario, and every parameter value, planned before anything runs.
struct ScenarioCheck {
  std::string name;  // the scenario's
  std::vector<std::string> errors;
};

ScenarioCheck check_scenario(const SweepOptions& o) {
  const SweepSpec& spec = o.spec;
  engine::PlanOptions po;
  po.tool_dir = o.fieldproof.parent_path();
  if (!spec.seeds.empty()) po.seed = spec.seeds.front();
  const engine::PlanResult base = engine::plan_run(spec.scenario_file, po);
  if (!base.plan) return {"", base.errors};
  ScenarioCheck out{base.plan->scenario.name, {}};
  for (const auto& u : base.plan->unsupported) {
    out.errors.push_back(spec.scenario_file.string() + ": not supported yet: " + u);
  }
  if (!out.errors.empty()) return out;
  for (const auto& p : spec.params) {
    for (const auto& v : p.values) {
      engine::PlanOptions pv = po;
      pv.overrides = {{p.path, v}};
      const engine::PlanResult r = engine::plan_run(spec.scenario_file, pv);
      if (r.plan && r.plan->unsupported.empty()) continue;
      for (const auto& e : r.errors) out.errors.push_back("--param " + p.path + "=" + v + ": " + e);
      if (r.plan) {
        for (const auto& u : r.plan->unsupported) {
          out.errors.push_back("--param " + p.path + "=" + v + ": not supported yet: " + u);
        }
      }
    }
  }
  return out;
}

// The id given (checked), else <scenario name>-sweep-<n> with the first n not taken.
Result<std::string> choose_sweep_id(const SweepOptions& o, const std::string& scenario_name) {
  std::string id = o.sweep_id;
  if (!id.empty()) {
    if (Status e = engine::check_run_id(id); !e.ok()) {
      return Status(StatusCode::kInvalidArgument, "--sweep-id '" + id + "': " + e.message());
    }
    return id;
  }
  if (o.resume) {
    return Status(StatusCode::kInvalidArgument,
                  "--resume needs the --sweep-id of the sweep to resume");
  }
  std::string stem;
  for (const char c : scenario_name) {
    stem += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  }
  std::error_code ec;
  for (int n = 1;; ++n) {
    id = stem + "-sweep-" + std::to_string(n);
    if (!fs::exists(o.runs_dir / id, ec)) return id;
  }
}

// A resumed sweep's plan must be for the same scenario text (and, when they are given, the same
// points) or its points would not be comparable.
std::string content_digest(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return std::to_string(std::hash<std::string>{}(ss.str()));
}

Result<json> read_plan_to_resume(const SweepOptions& o, const std::string& id, const fs::path& dir,
                                 const std::vector<SweepPoint>& points, const std::string& digest) {
  const SweepSpec& spec = o.spec;
  const fs::path plan_file = dir / kSweepPlanFile;
  const auto invalid = [](std::string m) {
    return Status(StatusCode::kInvalidArgument, std::move(m));
  };
  if (!o.resume) {
    return invalid(dir.string() + ": the sweep '" + id +
                   "' exists already (--resume runs its remaining points; or choose another "
                   "--sweep-id)");
  }
  Result<json> p = read_json_object(plan_file);
  if (!p.ok())
    return invalid(plan_file.string() + ": missing or not JSON; this is not a sweep to resume");
  json plan = std::move(p).value();
  if (plan.value("scenario", json::object()).value("content_hash", "") != digest) {
    return invalid(spec.scenario_file.string() + ": the scenario changed since sweep '" + id +
                   "' started (its points would not be comparable); start a new sweep");
  }
  if (!spec.seeds.empty() || !spec.params.empty()) {
    json mine = json::array();
    for (const auto& pt : points) mine.push_back(pt.to_json());
    if (mine != plan["points"]) {
      return invalid("sweep '" + id +
                     "' was planned with other seeds, parameters or "
                     "repetitions (" +
                     plan_file.string() +
                     "); resume it with the same "
                     "arguments, or with --resume and --sweep-id alone");
    }
  }
  return plan;
}

Result<json> write_new_plan(const SweepOptions& o, const std::string& id, const fs::path& dir,
                            const std::vector<SweepPoint>& points, const std::string& digest,
                            const std::string& scenario_name) {
  const SweepSpec& spec = o.spec;
  if (o.resume)
    return Status(StatusCode::kInvalidArgument, dir.string() + ": no such sweep to resume");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Status(StatusCode::kIoError, dir.string() + ": cannot be created: " + ec.message());
  json plan = {{"format", 1},
               {"sweep_id", id},
               {"scenario",
                {{"name", scenario_name},
                 {"file", spec.scenario_file.string()},
                 {"path", fs::absolute(spec.scenario_file).lexically_normal().string()},
                 {"content_hash", digest}}},
               {"cwd", fs::current_path(ec).string()},
               {"created_utc", format_utc(SystemClock::utc_now()())},
               {"seeds", spec.seeds},
               {"repeat", spec.repeat},
               {"max_rtf", spec.max_rtf ? json(*spec.max_rtf) : json()},
               {"params", json::array()},
               {"points", json::array()}};
  for (const auto& p : spec.params)
    plan["params"].push_back({{"path", p.path}, {"values", p.values}});
  for (const auto& pt : points) plan["points"].push_back(pt.to_json());
  if (const Status s = write_json_file(dir / kSweepPlanFile, plan); !s.ok()) return s;
  return plan;
}

// The sweep's row in the run index; a failure is a warning (`runs reindex` adds it later).
void index_sweep(const fs::path& index_file, const std::string& id,
                 const std::string& scenario_name, const json& plan,
                 std::vector<std::string>* warnings) {
  const auto idx = RunIndex::open(index_file);
  if (!idx.ok()) {
    warnings->push_back("run index: " + idx.status().message());
    return;
  }
  SweepRow row{id,
               scenario_name,
               plan.value("scenario", json::object()).value("file", ""),
               plan.value("created_utc", ""),
               static_cast<int64_t>(plan.value("points", json::array()).size()),
               plan};
  if (const Status s = (*idx)->add_sweep(row); !s.ok()) {
    warnings->push_back("run index: " + s.message());
  }
}

struct Pending {
  json point;
  size_t position;
};

// This shard's points that still have to run; the finished ones are counted into *pr and
// *verdicts (point id -> passed).
std::vector<Pending> pending_points(const SweepOptions& o, const json& plan, const fs::path& dir,
                                    SweepProgress* pr, std::map<std::string, bool>* verdicts) {
  std::vector<Pending> todo;
  std::error_code ec;
  const json all = plan.value("points", json::array());
  for (size_t i = 0; i < all.size(); ++i) {
    if (!in_shard(i, o.shard_index, o.shard_count)) continue;
    ++pr->total;
    const std::string pid = all[i].value("id", "");
    const fs::path pdir = dir / pid;
    if (auto run = finished_run(pdir)) {
      ++pr->done;
      (*verdicts)[pid] = run->value("status", "") == "passed";
      continue;
    }
    // An interrupted point runs again (its directory is removed when it starts again; the
    // Slurm executor's tasks remove it themselves).
    if (!o.plan_only && fs::exists(pdir, ec)) fs::remove_all(pdir, ec);
    todo.push_back({all[i], i});
  }
  for (const auto& [pid, ok] : *verdicts) (ok ? pr->passed : pr->failed) += 1;
  return todo;
}

// The overrides of a planned point, as the engine takes them.
std::vector<scenario::Override> point_overrides(const json& point) {
  std::vector<scenario::Override> out;
  for (const json& ov : point.value("overrides", json::array())) {
    out.push_back({ov.value("path", ""), ov.value("value", "")});
  }
  return out;
}

// The local process pool: starts each pending point (forked from this process, or exec'd as
// `fieldproof run`), at most `jobs` at once, and collects their verdicts as they end.
class PointPool {
 public:
  PointPool(const SweepOptions& o, const json& plan, const fs::path& dir, SweepOutcome* out,
            std::map<std::string, bool>* verdicts)
      : o_(o),
        plan_(plan),
        dir_(dir),
        index_file_(o.runs_dir / "index.sqlite"),
        tool_dir_(o.fieldproof.parent_path()),
        out_(out),
        pr_(out->progress),
        verdicts_(verdicts) {}

  void run(const std::vector<Pending>& todo) {
    t0_ = wall_();
    report();
    std::error_code ec;
    fs::create_directories(dir_ / "logs", ec);
    fork_points_ = o_.launch == SweepOptions::PointLaunch::kFork && !todo.empty();
    if (fork_points_) warm_fork_server(todo.front().point);
    size_t next = 0;
    bool forwarded = false;
    while (next < todo.size() || !running_.empty()) {
      while (!interrupted() && next < todo.size() && busy_slots() < static_cast<size_t>(o_.jobs)) {
        if (!start(todo[next++])) {
          next = todo.size();
          break;
        }
      }
      if (running_.empty()) break;
      if (interrupted() && !forwarded) {
        for (const auto& [child, p] : running_) ::kill(-child, SIGINT);
        forwarded = true;
      }
      if (!wait_for_a_point()) break;
    }
  }

  bool interrupted() const { return o_.interrupt && o_.interrupt->load(); }

 private:
  void report() {
    const double el = static_cast<double>((wall_() - t0_).ns()) / 1e9;
    pr_.rate = el > 0 && ran_ > 0 ? static_cast<double>(ran_) / el : 0;
    pr_.eta_s = pr_.rate > 0 ? static_cast<double>(pr_.total - pr_.done) / pr_.rate : 0;
    if (o_.on_progress) o_.on_progress(pr_);
  }

  // The fork server: plan once here (the SDF parse lands in load_sdf's memo, the assertion
  // plugins are loaded) so that every forked point's plan finds it done.
  void warm_fork_server(const json& first) {
    engine::PlanOptions po;
    po.tool_dir = tool_dir_;
    po.seed = first.value("seed", int64_t{0});
    po.overrides = point_overrides(first);
    (void)engine::plan_run(plan_.value("scenario", json::object()).value("path", ""), po);
    if (const size_t n = thread_count(); n != 1) exec_instead(n);
  }

  void exec_instead(size_t threads) {
    out_->warnings.push_back("the sweep process has " + std::to_string(threads) +
                             " threads, so its points are started by exec, not forked");
    fork_points_ = false;
  }

  std::optional<double> max_rtf() const {
    if (plan_.contains("max_rtf") && plan_["max_rtf"].is_number()) {
      return plan_["max_rtf"].get<double>();
    }
    return std::nullopt;
  }

  std::vector<std::string> exec_argv(const json& point, const std::string& pid) const {
    std::vector<std::string> argv = {o_.fieldproof.string(),
                                     "run",
                                     plan_.value("scenario", json::object()).value("path", ""),
                                     "--seed",
                                     std::to_string(point.value("seed", int64_t{0})),
                                     "--run-id",
                                     pid,
                                     "--runs-dir",
                                     dir_.string(),
                                     "--index",
                                     index_file_.string()};
    for (const scenario::Override& ov : point_overrides(point)) {
      argv.push_back("--set");
      argv.push_back(ov.path + "=" + ov.value);
    }
    if (const auto rtf = max_rtf()) {
      argv.push_back("--max-rtf");
      argv.push_back(fmt_num(*rtf));
    }
    return argv;
  }

  engine::RunOptions fork_options(const json& point, const std::string& pid) const {
    engine::RunOptions ro;
    ro.scenario_file = plan_.value("scenario", json::object()).value("path", "");
    ro.seed = point.value("seed", int64_t{0});
    ro.overrides = point_overrides(point);
    ro.run_id = pid;
    ro.runs_dir = dir_;
    ro.index_file = index_file_;
    // The same value the exec'd point parses from --max-rtf.
    if (const auto rtf = max_rtf()) ro.max_rtf = std::stod(fmt_num(*rtf));
    ro.tool_dir = tool_dir_;
    return ro;
  }

  // A forked point; an error when fork failed; -1 when the process has threads (fork_points_
  // is then off and the caller execs instead).
  Result<pid_t> fork_point(const json& point, const std::string& pid, const fs::path& log) {
    engine::RunOptions ro = fork_options(point, pid);
    const size_t threads = thread_count();
    if (threads != 1) {
      exec_instead(threads);
      return pid_t{-1};
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      return Status(StatusCode::kUnavailable, std::string("pipe: ") + std::strerror(errno));
    }
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(fds[0]);
      for (const auto& [fd, p] : recorded_) ::close(fd);
      run_forked_point(log, std::move(ro), threads, fds[1]);
    }
    ::close(fds[1]);
    if (child < 0) {
      ::close(fds[0]);
      return Status(StatusCode::kUnavailable, std::string("fork: ") + std::strerror(errno));
    }
    ::setpgid(child, child);  // also here: a SIGINT may be forwarded before the child runs
    recorded_[fds[0]] = child;
    return child;
  }

  // Starts one point; false (and the sweep starts nothing more) when it could not.
  bool start(const Pending& p) {
    const std::string pid = p.point.value("id", "");
    const fs::path log = dir_ / "logs" / (pid + ".log");
    Result<pid_t> child = pid_t{-1};
    if (fork_points_) child = fork_point(p.point, pid, log);
    if (!fork_points_) child = spawn(exec_argv(p.point, pid), log);
    if (!child.ok()) {
      out_->exit_code = 1;
      out_->warnings.push_back(child.status().message());
      return false;
    }
    running_[*child] = p;
    pr_.running = busy_slots();
    return true;
  }

  // The points holding a slot: running, and not yet past their run.json. A forked point whose
  // run.json is written still writes its reports and its index row, beside the next point.
  size_t busy_slots() const { return running_.size() - recorded_points_.size(); }

  // Waits until a point frees its slot or ends (and reaps it). False when there is nothing left
  // to wait for.
  bool wait_for_a_point() {
    if (recorded_.empty()) return reap_any(0);  // exec'd points only, as before the pipes
    if (recorded_.size() < running_.size()) {
      // An exec'd point among forked ones (the fork fallback): it has no pipe, so look at both.
      if (!poll_pipes(20)) (void)reap_any(WNOHANG);
      return true;
    }
    (void)poll_pipes(-1);
    return true;
  }

  // The forked points' pipes: a byte frees the point's slot, end of file is its end (its process
  // is reaped then). False when nothing was ready within `timeout_ms`; true after a signal too
  // (the caller looks again, and at the interrupt).
  bool poll_pipes(int timeout_ms) {
    std::vector<pollfd> fds;
    for (const auto& [fd, child] : recorded_) fds.push_back({fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0) return true;
    if (ready == 0) return false;
    for (const pollfd& f : fds) {
      if (f.revents == 0) continue;
      const pid_t child = recorded_.at(f.fd);
      char b = 0;
      const ssize_t n = ::read(f.fd, &b, 1);
      if (n > 0) {
        recorded_points_.insert(child);
        pr_.running = busy_slots();
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      ::close(f.fd);
      recorded_.erase(f.fd);
      int st = 0;
      while (::waitpid(child, &st, 0) < 0 && errno == EINTR) {
      }
      reaped(child);
    }
    return true;
  }

  // Any child; with WNOHANG, false when none had ended.
  bool reap_any(int flags) {
    int st = 0;
    const pid_t done = ::waitpid(-1, &st, flags);
    if (done < 0) return errno == EINTR;  // ECHILD: nothing left to wait for
    if (done == 0) return false;
    reaped(done);
    return true;
  }

  void reaped(pid_t child) {
    recorded_points_.erase(child);
    auto it = running_.find(child);
    if (it == running_.end()) return;
    const std::string pid = it->second.point.value("id", "");
    running_.erase(it);
    pr_.running = busy_slots();
    collect(pid);
    report();
  }

  // A point's process ended: its verdict from its run directory.
  void collect(const std::string& pid) {
    const auto run = finished_run(dir_ / pid);
    if (!run) {
      // Interrupted (it runs again with --resume), or it never made a run directory.
      if (!interrupted()) {
        ++pr_.done;
        ++pr_.failed;
        (*verdicts_)[pid] = false;
        out_->warnings.push_back("point " + pid + " made no run directory (" +
                                 (dir_ / "logs" / (pid + ".log")).string() + " says why)");
      }
      return;
    }
    ++pr_.done;
    ++ran_;
    const bool ok = run->value("status", "") == "passed";
    (*verdicts_)[pid] = ok;
    (ok ? pr_.passed : pr_.failed) += 1;
  }

  const SweepOptions& o_;
  const json& plan_;
  const fs::path dir_;
  const fs::path index_file_;
  const fs::path tool_dir_;
  SweepOutcome* out_;
  SweepProgress& pr_;
  std::map<std::string, bool>* verdicts_;
  std::map<pid_t, Pending> running_;
  std::map<int, pid_t> recorded_;    // a forked point's pipe (read end) -> its process
  std::set<pid_t> recorded_points_;  // forked points past their run.json, still running
  bool fork_points_ = false;
  const WallNow wall_ = SystemClock::wall_now();
  SimTime t0_;
  size_t ran_ = 0;
};

}  // namespace

// The stages: the options checked, the scenario and every parameter value planned, the sweep's
// folder and plan made (or read to resume), the sweep indexed, the pending points found, then
// run by the pool, and the verdicts summed up.
SweepOutcome run_sweep(const SweepOptions& o) {
  SweepOutcome out;
  const auto invalid = [&out](std::vector<std::string> e) {
    out.exit_code = 2;
    out.errors = std::move(e);
    return out;
  };
  if (auto e = option_errors(o); !e.empty()) return invalid(std::move(e));
  const ScenarioCheck scenario = check_scenario(o);
  if (!scenario.errors.empty()) return invalid(scenario.errors);

  const Result<std::string> id = choose_sweep_id(o, scenario.name);
  if (!id.ok()) return invalid({id.status().message()});
  const fs::path dir = o.runs_dir / *id;
  out.sweep_id = *id;
  out.dir = dir;
  const std::vector<SweepPoint> points = expand(o.spec);
  const std::string digest = content_digest(o.spec.scenario_file);
  std::error_code ec;
  const Result<json> planned = fs::exists(dir, ec)
                                   ? read_plan_to_resume(o, *id, dir, points, digest)
                                   : write_new_plan(o, *id, dir, points, digest, scenario.name);
  if (!planned.ok()) return invalid({planned.status().message()});
  const json& plan = *planned;
  index_sweep(o.runs_dir / "index.sqlite", *id, scenario.name, plan, &out.warnings);

  std::map<std::string, bool> verdicts;  // point id -> passed
  const std::vector<Pending> todo = pending_points(o, plan, dir, &out.progress, &verdicts);
  out.plan = plan;
  for (const Pending& p : todo) out.pending.push_back(p.position);
  if (o.plan_only) {
    out.exit_code = todo.empty() && out.progress.failed == 0 ? 0 : 1;
    return out;
  }

  PointPool pool(o, plan, dir, &out, &verdicts);
  pool.run(todo);
  for (const json& p : plan.value("points", json::array())) {
    const auto it = verdicts.find(p.value("id", ""));
    if (it != verdicts.end() && !it->second) out.failing.push_back(it->first);
  }
  if (pool.interrupted()) {
    out.exit_code = 130;
  } else if (out.exit_code == 0) {
    const SweepProgress& pr = out.progress;
    out.exit_code = pr.failed == 0 && pr.done == pr.total ? 0 : 1;
  }
  return out;
}

void add_finished_points(const fs::path& dir, const json& plan, std::map<std::string, bool>* verdicts) {
  for (const json& p : plan.value("points", json::array())) {
    const std::string id = p.value("id", "");
    if (verdicts->count(id)) continue;
    if (auto run = finished_run(dir / id)) (*verdicts)[id] = run->value("status", "") == "passed";
  }
}

}  // namespace fieldproof::fleet
