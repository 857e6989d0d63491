#include "engine/resources.hpp"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace fieldproof::engine {

ResourceReader::ResourceReader(std::function<SimTime()> wall_now, std::string proc_root,
                               long ticks_per_s)
    : wall_now_(std::move(wall_now)),
      proc_root_(std::move(proc_root)),
      ticks_per_s_(ticks_per_s > 0 ? ticks_per_s : sysconf(_SC_CLK_TCK)) {
  if (ticks_per_s_ <= 0) ticks_per_s_ = 100;
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
      break;
    }
  }
  if (!rss_found) {
    u.error = base + "/status: no VmRSS (a zombie?)";
    return u;
  }
  const uint64_t ticks = utime + stime;
  const SimTime now = wall_now_();
  u.ok = true;
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

}  // namespace fieldproof::engine
