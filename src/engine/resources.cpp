#include "engine/resources.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "fieldproof/engine/stack_host.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::engine {

using nlohmann::json;

namespace {

double round3(double v) { return std::round(v * 1e3) / 1e3; }

// The first line of a file, "" when it cannot be read.
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

// A limit file's value in bytes: nullopt for "max", an unreadable file, or v1's "unlimited"
// (a page-rounded INT64_MAX, anything from 2^60 on).
std::optional<double> limit_bytes(const std::string& path) {
  const std::string v = first_line(path);
  if (v.empty() || v == "max") return std::nullopt;
  uint64_t n = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
  if (r.ec != std::errc() || n >= (uint64_t{1} << 60)) return std::nullopt;
  return static_cast<double>(n);
}

}  // namespace

ResourceReader::ResourceReader(std::function<SimTime()> wall_now, std::string proc_root,
                               long ticks_per_s, std::string cgroup_root)
    : wall_now_(std::move(wall_now)),
      proc_root_(std::move(proc_root)),
      ticks_per_s_(ticks_per_s > 0 ? ticks_per_s : sysconf(_SC_CLK_TCK)),
      cgroup_root_(std::move(cgroup_root)) {
  if (ticks_per_s_ <= 0) ticks_per_s_ = 100;
}

// /proc/<pid>/cgroup: "0::/path" (v2) or "N:memory:/path" (v1, possibly "N:cpu,memory:/path").
// The effective limit is the smallest on the way from the process's group to the root.
std::optional<double> ResourceReader::memory_limit_mb(const std::string& base) const {
  std::ifstream in(base + "/cgroup");
  std::string line;
  std::optional<double> best;
  while (std::getline(in, line)) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    std::string dir;
    std::string file;
    if (controllers.empty()) {
      dir = cgroup_root_;
      file = "memory.max";
    } else {
      bool memory = false;
      std::istringstream cs(controllers);
      for (std::string c; std::getline(cs, c, ',');) memory = memory || c == "memory";
      if (!memory) continue;
      dir = cgroup_root_ + "/memory";
      file = "memory.limit_in_bytes";
    }
    while (!path.empty() && path.back() == '/') path.pop_back();
    for (;;) {
      if (const auto v = limit_bytes(dir + path + "/" + file); v && (!best || *v < *best)) best = v;
      if (path.empty()) break;
      path.resize(path.rfind('/'));
    }
  }
  if (!best) return std::nullopt;
  return *best / (1024.0 * 1024.0);
}

ProcessUsage ResourceReader::sample(int pid) {
  ProcessUsage u;
  const std::string base = proc_root_ + "/" + std::to_string(pid);
  std::ifstream stat(base + "/stat");
  std::string line;
  if (!stat || !std::getline(stat, line)) {
    u.error = base + "/stat: cannot be read (the process is gone?)";
    return u;
  }
  // The command name (field 2) is in parentheses and may hold spaces: fields count from the
  // last ')'. utime and stime are fields 14 and 15, so the 12th and 13th after it.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) {
    u.error = base + "/stat: unexpected format";
    return u;
  }
  std::istringstream fields(line.substr(close + 1));
  std::string f;
  uint64_t utime = 0;
  uint64_t stime = 0;
  bool parsed = false;
  const auto number = [](const std::string& text, uint64_t* v) {
    const auto r = std::from_chars(text.data(), text.data() + text.size(), *v);
    return r.ec == std::errc() && r.ptr == text.data() + text.size();
  };
  for (int i = 3; fields >> f; ++i) {
    if (i == 14 && !number(f, &utime)) break;
    if (i == 15) {
      parsed = number(f, &stime);
      break;
    }
  }
  if (!parsed) {
    u.error = base + "/stat: utime/stime missing";
    return u;
  }
  std::ifstream status(base + "/status");
  bool rss_found = false;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream v(line.substr(6));
      double kb = 0;
      v >> kb;
      u.memory_mb = kb / 1024.0;
      rss_found = true;
    } else if (line.rfind("Threads:", 0) == 0) {
      std::istringstream v(line.substr(8));
      v >> u.tasks;
    }
  }
  if (!rss_found) {
    u.error = base + "/status: no VmRSS (a zombie?)";
    return u;
  }
  const uint64_t ticks = utime + stime;
  const SimTime now = wall_now_();
  u.ok = true;
  u.memory_limit_mb = memory_limit_mb(base);
  u.cpu_s = static_cast<double>(ticks) / static_cast<double>(ticks_per_s_);
  auto it = last_.find(pid);
  if (it == last_.end()) {
    u.baseline = true;
  } else {
    const double dw = static_cast<double>((now - it->second.wall).ns()) / 1e9;
    const double dc = static_cast<double>(ticks - std::min(ticks, it->second.ticks)) /
                      static_cast<double>(ticks_per_s_);
    u.cpu_pct = dw > 0 ? 100.0 * dc / dw : 0.0;
  }
  last_[pid] = {ticks, now};
  return u;
}

// ---- ResourceMonitor ----

ResourceMonitor::ResourceMonitor(ResourceMonitorOptions options)
    : o_(std::move(options)),
      reader_(
          o_.wall_now ? o_.wall_now : [] { return SimTime::zero(); }, o_.proc_root, 0,
          o_.cgroup_root) {
  if (!o_.wall_now) o_.wall_now = [] { return SimTime::zero(); };
  if (o_.period.ns() <= 0) o_.period = seconds(1);
}

ResourceMonitor::~ResourceMonitor() { stop(); }

void ResourceMonitor::start() {
  {
    MutexLock lk(mu_);
    if (started_) return;
    started_ = true;
    last_round_ = o_.wall_now();
    for (const MonitoredProcess& p : o_.processes) (void)reader_.sample(p.pid);  // the baseline
  }
  thread_ = std::thread([this] { loop(); });
}

void ResourceMonitor::stop() {
  bool final_round = false;
  bool restarted_only = false;
  {
    MutexLock lk(mu_);
    if (stop_) return;
    stop_ = true;
    // The teardown ends the last interval: a final round when at least half a period passed
    // since the last one (a shorter window says little: CPU time is counted in clock ticks), and
    // always when no round was taken yet (an unpaced run shorter than a period still measures
    // its processes once, over the whole run).
    const Duration since = o_.wall_now() - last_round_;
    final_round = started_ && (since >= o_.period / 2 || (!any_round_ && since.ns() > 0));
    // A process restarted since the last round has no line yet: it is measured once, from its
    // restart to the end, even when the others' last interval is too short.
    restarted_only = started_ && !final_round && !baseline_at_.empty();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (final_round || restarted_only) round(/*final=*/true, restarted_only);
}

void ResourceMonitor::set_sim(SimTime sim) { sim_ns_.store(sim.ns()); }

void ResourceMonitor::set_pid(const std::string& process, int pid) {
  MutexLock lk(mu_);
  for (MonitoredProcess& p : o_.processes) {
    if (p.process != process) continue;
    p.pid = pid;
    errors_reported_.erase(process);
    baseline_at_.erase(process);
    if (pid > 0) {
      (void)reader_.sample(pid);  // the new process's CPU baseline
      baseline_at_[process] = o_.wall_now();
    }
  }
}

void ResourceMonitor::loop() {
  // Wall-clock grid from the start: start + k x period (missed deadlines are skipped).
  const SimTime t0 = o_.wall_now();
  int64_t k = 1;
  MutexLock lk(mu_);
  while (!stop_) {
    const SimTime due = t0 + o_.period * k;
    const Duration left = due - o_.wall_now();
    if (left.ns() > 0) {
      (void)cv_.wait_for(mu_, std::chrono::nanoseconds(left.ns()));
      continue;  // re-check stop_ and the time
    }
    lk.unlock();
    sample_once();
    lk.lock();
    k = (o_.wall_now() - t0) / o_.period + 1;
  }
}

void ResourceMonitor::sample_once() { round(false, false); }

void ResourceMonitor::round(bool final, bool restarted_only) {
  const SimTime sim = SimTime::from_ns(sim_ns_.load());
  const SimTime wall = o_.wall_now();
  {
    MutexLock lk(mu_);
    last_round_ = wall;
    any_round_ = true;
  }
  json wall_epoch = nullptr;
  if (o_.utc_now) wall_epoch = round3(static_cast<double>(o_.utc_now()) / 1e9);
  std::vector<json> lines;
  std::vector<std::string> errors;
  {
    MutexLock lk(mu_);
    for (const MonitoredProcess& p : o_.processes) {
      if (p.pid <= 0) continue;  // not running (a killed stack before its restart)
      const auto b = baseline_at_.find(p.process);
      if (restarted_only && b == baseline_at_.end()) continue;
      if (b != baseline_at_.end() && !final && wall - b->second < o_.period / 2) {
        continue;  // its baseline is too recent for a CPU figure: the next round measures it
      }
      const ProcessUsage u = reader_.sample(p.pid);
      if (!u.ok) {
        if (errors_reported_.insert(p.process).second) {
          errors.push_back("the resource monitor cannot read " + p.process + " (pid " +
                           std::to_string(p.pid) + "): " + u.error);
        }
        continue;
      }
      if (u.baseline) continue;  // a process first read now: its CPU is known next second
      json j = {{"process", p.process},
                {"container", p.process},
                {"role", p.role},
                {"vehicle", p.vehicle.empty() ? json(nullptr) : json(p.vehicle)},
                {"pid", p.pid},
                {"cpu_pct", round3(u.cpu_pct)},
                {"memory_mb", round3(u.memory_mb)},
                {"memory_limit_mb",
                 u.memory_limit_mb ? json(round3(*u.memory_limit_mb)) : json(nullptr)},
                {"pids", u.tasks},
                {"sim", static_cast<double>(sim.ns()) / 1e9},
                {"wall", wall_epoch},
                {"wall_s", round3(static_cast<double>((wall - o_.wall0).ns()) / 1e9)}};
      if (!p.hosts.empty()) j["hosts"] = p.hosts;
      assertions::Sample s;
      s.kind = assertions::Sample::Kind::kResources;
      s.sim = sim;
      s.process = p.process;
      // The figures as recorded (three decimals), so a re-judged run reads what this one judged.
      s.cpu_pct = round3(u.cpu_pct);
      s.memory_mb = round3(u.memory_mb);
      if (!p.vehicle.empty()) {
        s.vehicle = p.vehicle;
        pending_.push_back(s);
      }
      for (const std::string& v : p.hosts) {
        s.vehicle = v;
        pending_.push_back(s);
      }
      last_[p.process] = j;
      baseline_at_.erase(p.process);  // measured since its restart
      ++lines_;
      lines.push_back(std::move(j));
    }
  }
  if (o_.on_line) {
    for (const json& j : lines) o_.on_line(j);
  }
  if (o_.on_error) {
    for (const std::string& e : errors) o_.on_error(e);
  }
  cv_.notify_all();
}

std::vector<assertions::Sample> ResourceMonitor::take() {
  MutexLock lk(mu_);
  std::vector<assertions::Sample> out;
  out.swap(pending_);
  return out;
}

bool ResourceMonitor::wait_lines(uint64_t n, std::chrono::milliseconds timeout) {
  MutexLock lk(mu_);
  return cv_.wait_for(mu_, timeout, [&]() FIELDPROOF_REQUIRES(mu_) { return lines_ >= n; });
}

json ResourceMonitor::summary() const {
  MutexLock lk(mu_);
  json out = {{"processes", json::array()}, {"samples", lines_}, {"last", json::array()}};
  for (const MonitoredProcess& p : o_.processes) out["processes"].push_back(p.process);
  for (const auto& [process, line] : last_) out["last"].push_back(line);
  return out;
}

ResourceMonitorOptions resource_monitor_options(
    const RunPlan& plan, const Session& session, std::function<SimTime()> wall_now, SimTime wall0,
    std::function<int64_t()> utc_now, std::function<void(const json&)> on_line,
    std::function<void(const std::string&)> on_error) {
  ResourceMonitorOptions o;
  o.wall_now = std::move(wall_now);
  o.wall0 = wall0;
  o.utc_now = std::move(utc_now);
  o.on_line = std::move(on_line);
  o.on_error = std::move(on_error);
  MonitoredProcess engine{"engine", "engine", "", static_cast<int>(getpid()), {}};
  std::vector<MonitoredProcess> stacks;
  for (const PlannedVehicle& v : plan.vehicles) {
    const int pid = session.stack_pid(v.name);
    if (pid > 0) {
      stacks.push_back({stack_participant(v.name), "stack", v.name, pid, {}});
    } else if (pid == 0) {
      engine.hosts.push_back(v.name);  // an in-process stack, or none: measured as the engine
    }
  }
  o.processes.push_back(std::move(engine));
  for (MonitoredProcess& p : stacks) o.processes.push_back(std::move(p));
  return o;
}

}  // namespace fieldproof::engine
