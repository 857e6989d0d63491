// A private single-node Slurm cluster for tests and benchmarks: munged, slurmctld and slurmd
// (Debian's munge and slurm-wlm) started as child processes with a slurm.conf, a munge key and
// state folders of their own under one folder, on free TCP ports, so a system Slurm is never
// touched. Clients reach it through SLURM_CONF (env_prefix()). The daemons are stopped by their
// pids when the cluster is destroyed: SIGTERM, then SIGKILL after 15 s.
//
//   std::string why;
//   auto cluster = SlurmCluster::start(dir, &why);
//   if (!cluster) GTEST_SKIP() << why;               // not root, packages missing, no start
//   run_cli("sweep ... --executor slurm", true, cluster->env_prefix());
//
// start() needs root (slurmd launches jobs as their users); it returns nullptr and *why naming
// the missing piece, or the daemons' last log lines when they did not come up within 30 s.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fieldproof/util/spawn.hpp"

namespace fieldproof::testing {

class SlurmCluster {
 public:
  static std::unique_ptr<SlurmCluster> start(const std::filesystem::path& dir, std::string* why) {
    namespace fs = std::filesystem;
    if (::geteuid() != 0) {
      *why = "not root (uid " + std::to_string(::geteuid()) +
             "): slurmd must run as root to launch jobs, so no private Slurm cluster here";
      return nullptr;
    }
    std::unique_ptr<SlurmCluster> c(new SlurmCluster());
    for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel",
                          "scontrol"}) {
      const std::string path = find(p);
      if (path.empty()) {
        *why = std::string(p) +
               " is not installed (Debian's slurm-wlm and munge; scripts/install-deps.sh installs "
               "them)";
        return nullptr;
      }
      c->bin_[p] = path;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    for (const char* d : {"munge", "state", "spool", "log"}) fs::create_directories(dir / d, ec);
    if (ec) {
      *why = dir.string() + ": " + ec.message();
      return nullptr;
    }
    ::chmod((dir / "munge").c_str(), 0755);  // the socket's folder: clients need to reach it
    c->dir_ = dir;
    c->conf_ = dir / "slurm.conf";
    const fs::path key = dir / "munge" / "munge.key";
    {
      std::ifstream rnd("/dev/urandom", std::ios::binary);
      std::string bytes(1024, '\0');
      rnd.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      std::ofstream(key, std::ios::binary) << bytes;
    }
    ::chmod(key.c_str(), 0400);
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    c->node_ = std::string(host).substr(0, std::string(host).find('.'));
    const int ctld_port = free_port(), slurmd_port = free_port();
    if (ctld_port <= 0 || slurmd_port <= 0 || ctld_port == slurmd_port) {
      *why = "no free TCP port for slurmctld and slurmd";
      return nullptr;
    }
    const unsigned cpus = std::max(1U, std::thread::hardware_concurrency());
    const std::string d = dir.string();
    {
      std::ofstream f(c->conf_);
      f << "ClusterName=fp" << ::getpid() << "\n"
        << "SlurmctldHost=" << c->node_ << "(127.0.0.1)\n"
        << "SlurmctldPort=" << ctld_port << "\nSlurmdPort=" << slurmd_port << "\n"
        << "AuthType=auth/munge\nCredType=cred/munge\n"
        << "AuthInfo=socket=" << d << "/munge/munge.sock\n"
        << "SlurmUser=root\nSlurmdUser=root\n"
        << "StateSaveLocation=" << d << "/state\nSlurmdSpoolDir=" << d << "/spool\n"
        << "SlurmctldPidFile=" << d << "/slurmctld.pid\nSlurmdPidFile=" << d << "/slurmd.pid\n"
        << "SlurmctldLogFile=" << d << "/log/slurmctld.log\n"
        << "SlurmdLogFile=" << d << "/log/slurmd.log\n"
        << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
        << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
        << "JobCompType=jobcomp/none\nMpiDefault=none\nSwitchType=switch/none\n"
        << "SchedulerType=sched/builtin\nSelectType=select/cons_tres\n"
        << "SelectTypeParameters=CR_CPU\nReturnToService=2\nSlurmctldTimeout=30\n"
        << "SlurmdTimeout=30\nInactiveLimit=0\nMinJobAge=300\nKillWait=5\n"
        << "NodeName=" << c->node_ << " NodeAddr=127.0.0.1 CPUs=" << cpus << " State=UNKNOWN\n"
        << "PartitionName=fp Nodes=" << c->node_
        << " Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO\n";
    }
    c->munged_ = c->spawn({c->bin_["munged"], "-F", "-f", "--socket=" + d + "/munge/munge.sock",
                           "--key-file=" + key.string(), "--pid-file=" + d + "/munge/munged.pid",
                           "--seed-file=" + d + "/munge/munged.seed",
                           "--log-file=" + d + "/log/munged.log", "--num-threads=2"},
                          dir / "log" / "munged.out");
    if (!c->wait_for([&] { return fs::exists(dir / "munge" / "munge.sock"); }, 10)) {
      *why = "munged did not start: " + c->tail("munged.out");
      return nullptr;
    }
    c->slurmctld_ = c->spawn({c->bin_["slurmctld"], "-D", "-i", "-f", c->conf_.string()},
                             dir / "log" / "slurmctld.out");
    c->slurmd_ = c->spawn({c->bin_["slurmd"], "-D", "-f", c->conf_.string(), "-N", c->node_},
                          dir / "log" / "slurmd.out");
    const bool up = c->wait_for(
        [&] {
          const std::string s = c->client("sinfo -h -o %T -n " + c->node_);
          return s.find("idle") != std::string::npos || s.find("mixed") != std::string::npos;
        },
        30);
    if (!up) {
      *why = "slurmctld and slurmd did not come up within 30 s; slurmctld: " +
             c->tail("slurmctld.log") + "; slurmd: " + c->tail("slurmd.log") + c->tail("slurmd.out");
      return nullptr;
    }
    return c;
  }

  ~SlurmCluster() {
    for (pid_t* p : {&slurmd_, &slurmctld_, &munged_}) stop(p);
  }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  const std::filesystem::path& conf() const { return conf_; }
  // "SLURM_CONF=<conf> ": shell text to put before a command that talks to this cluster.
  std::string env_prefix() const { return "SLURM_CONF=" + conf_.string() + " "; }
  // A client command's stdout (the command as shell text, SLURM_CONF set to this cluster).
  std::string client(const std::string& command) const {
    std::string out;
    FILE* p = ::popen((env_prefix() + command + " 2>/dev/null").c_str(), "r");
    if (!p) return out;
    char buf[4096];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
    return out;
  }
  // Waits (polling every 50 ms) until `ready` holds, at most `seconds`; whether it did.
  template <class F>
  bool wait_for(F ready, double seconds) const {
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    while (!ready()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }
  // True when the daemons this cluster started are all still running.
  bool alive() const {
    for (const pid_t p : {munged_, slurmctld_, slurmd_}) {
      if (p <= 0 || ::waitpid(p, nullptr, WNOHANG) != 0) return false;
    }
    return true;
  }

 private:
  SlurmCluster() = default;

  static std::string find(const std::string& program) {
    std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
    path += ":/usr/sbin:/sbin:/usr/bin";
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      const std::string p = dir + "/" + program;
      if (!dir.empty() && ::access(p.c_str(), X_OK) == 0) return p;
    }
    return "";
  }

  static int free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    int port = -1;
    if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
    ::close(s);
    return port;
  }

  pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& log) const {
    fieldproof::util::SpawnOptions o;
    o.env = {{"SLURM_CONF", conf_.string()}};
    o.stdout_to = fieldproof::util::Redirect::file(log.string());
    o.stderr_to = fieldproof::util::Redirect::same_as_stdout();
    o.stdin_from_null = true;
    return fieldproof::util::spawn_process(argv, o).pid;
  }

  void stop(pid_t* pid) const {
    if (*pid <= 0) return;
    if (::waitpid(*pid, nullptr, WNOHANG) == 0) {
      ::kill(*pid, SIGTERM);
      const bool ended = wait_for([&] { return ::waitpid(*pid, nullptr, WNOHANG) != 0; }, 15);
      if (!ended) {
        ::kill(*pid, SIGKILL);
        ::waitpid(*pid, nullptr, 0);
      }
    }
    *pid = -1;
  }

  std::string tail(const std::string& log) const {
    std::ifstream in(dir_ / "log" / log);
    std::vector<std::string> lines;
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
    std::string out;
    for (size_t i = lines.size() > 5 ? lines.size() - 5 : 0; i < lines.size(); ++i) {
      out += lines[i] + " | ";
    }
    return out.empty() ? "(no log)" : out;
  }

  std::filesystem::path dir_, conf_;
  std::string node_;
  std::map<std::string, std::string> bin_;
  pid_t munged_ = -1, slurmctld_ = -1, slurmd_ = -1;
};

}  // namespace fieldproof::testing
