// README.md's "A short tour", run line by line as a new user would: every
// command of its code block is run from a scratch folder that sees the repository's examples/ and
// tests/, and its exit code is checked against the one its comment states ("exit N"). What the
// test supplies: `fieldproof` is the built executable; `runs/<run_id>` is the newest run directory
// the tour has made so far, or, for `fieldproof clock`, a live run the test starts; `SCENARIO` is
// that run's scenario ("exit as its verdict": re-judged, it exits as it did live); `run` lines get
// --max-rtf 0 (unpaced: the verdict does not depend on the pace, the test is faster); the
// coordinator, which serves until Ctrl-C, gets SIGINT once it printed "ready".
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct TourLine {
  std::string command;  // as the README writes it
  std::string comment;
};

// The code block after "## A short tour".
std::vector<TourLine> tour_lines() {
  const std::string readme = read_file(fs::path(FIELDPROOF_SOURCE_DIR) / "README.md");
  const size_t section = readme.find("## A short tour");
  const size_t open = readme.find("```sh\n", section);
  const size_t close = readme.find("```", open + 6);
  std::vector<TourLine> out;
  if (section == std::string::npos || open == std::string::npos || close == std::string::npos) {
    return out;
  }
  std::istringstream in(readme.substr(open + 6, close - open - 6));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const size_t hash = line.find(" #");
    TourLine t;
    t.command = line.substr(0, hash);
    while (!t.command.empty() && t.command.back() == ' ') t.command.pop_back();
    if (hash != std::string::npos) t.comment = line.substr(hash + 2);
    out.push_back(t);
  }
  return out;
}

// The newest run directory under runs/ (by its run.json's write time).
fs::path newest_run(const fs::path& runs) {
  fs::path best;
  fs::file_time_type when{};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(runs, ec)) {
    const fs::path rj = e.path() / "run.json";
    if (!fs::exists(rj)) continue;
    const auto t = fs::last_write_time(rj);
    if (best.empty() || t > when) {
      best = e.path();
      when = t;
    }
  }
  return best;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
}

// A command in the background; its exit code after SIGINT (or on its own).
class Background {
 public:
  Background(const std::string& shell_command, const fs::path& cwd, const fs::path& out)
      : out_(out) {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      if (chdir(cwd.c_str()) != 0) _exit(127);
      const std::string cmd = "exec " + shell_command + " > '" + out.string() + "' 2>&1";
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Background() { (void)stop(); }
  // Polls (up to 60 s) until `ready` holds or the process exited.
  bool wait_for(const std::function<bool()>& ready) {
    for (int i = 0; i < 6000; ++i) {
      if (ready()) return true;
      int st = 0;
      if (pid_ > 0 && waitpid(pid_, &st, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        pid_ = -1;
        return ready();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  int stop() {
    if (pid_ <= 0) return exit_code_;
    kill(pid_, SIGINT);
    int st = 0;
    if (waitpid(pid_, &st, 0) == pid_) {
      exit_code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    pid_ = -1;
    return exit_code_;
  }
  std::string output() const { return read_file(out_); }

 private:
  fs::path out_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

TEST(ReadmeTour, EveryCommandExitsWithTheCodeItsCommentStates) {
  const std::vector<TourLine> lines = tour_lines();
  ASSERT_GE(lines.size(), 10u) << "README.md has no tour code block";
  // A scratch folder that sees the repository's examples and tests, so runs/ is made here.
  const fs::path work = fresh_runs_dir("readme_tour", "");
  fs::create_directories(work);
  for (const char* d : {"examples", "tests"}) {
    fs::create_directory_symlink(fs::path(FIELDPROOF_SOURCE_DIR) / d, work / d);
  }
  const std::string exe = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
  const std::regex exit_re(R"(exit (\d+))");
  size_t checked = 0;
  for (const TourLine& t : lines) {
    SCOPED_TRACE(t.command + "  #" + t.comment);
    ASSERT_EQ(t.command.rfind("fieldproof ", 0), 0u) << "a tour line that is not a command";
    std::string cmd = exe + t.command.substr(std::string("fieldproof").size());
    int expected = -1;
    std::smatch m;
    const bool as_verdict = t.comment.find("exit as its verdict") != std::string::npos;
    if (!as_verdict) {
      ASSERT_TRUE(std::regex_search(t.comment, m, exit_re)) << "the line states no exit code";
      expected = std::stoi(m[1].str());
    }
    const bool is_run = t.command.rfind("fieldproof run ", 0) == 0;
    if (is_run && t.command.find("--max-rtf") == std::string::npos &&
        t.command.find("--dry-run") == std::string::npos &&
        t.command.find("--from-recording") == std::string::npos) {
      cmd += " --max-rtf 0";
    }
    std::unique_ptr<Background> live;
    if (t.command.find("<run_id>") != std::string::npos || as_verdict) {
      fs::path run;
      if (t.command.rfind("fieldproof clock ", 0) == 0) {
        // fieldproof clock controls a live run: one the test starts and ends.
        live = std::make_unique<Background>(
            exe + " run examples/scenarios/ugv_nav_to_goal.yaml --run-id tour-live", work,
            work / "tour-live.out");
        ASSERT_TRUE(live->wait_for([&] {
          return fs::exists(work / "runs/tour-live/control.json");
        })) << live->output();
        run = work / "runs" / "tour-live";
      } else {
        run = newest_run(work / "runs");
        ASSERT_FALSE(run.empty()) << "no run directory yet";
      }
      replace_all(cmd, "<run_id>", run.filename().string());
      if (as_verdict) {
        // The run's own scenario (as given, relative to this folder): re-judged on its own
        // recording, it exits as the live run did.
        const json rj = run_json(run);
        replace_all(cmd, "SCENARIO", rj["scenario"]["file"].get<std::string>());
        expected = rj["exit_code"].get<int>();
      }
    }
    int code = -1;
    std::string out;
    if (t.command.rfind("fieldproof coordinator ", 0) == 0) {
      Background coordinator(cmd, work, work / "coordinator.out");
      ASSERT_TRUE(coordinator.wait_for([&] {
        return coordinator.output().find("ready") != std::string::npos;
      })) << coordinator.output();
      code = coordinator.stop();
      out = coordinator.output();
    } else {
      const shell::ShellResult r =
          shell::run_shell("cd '" + work.string() + "' && " + cmd + " > tour.out 2>&1");
      code = r.exit_code;
      out = read_file(work / "tour.out");
    }
    if (live) live->stop();
    EXPECT_EQ(code, expected) << cmd << "\n" << out.substr(0, 3000);
    ++checked;
  }
  EXPECT_EQ(checked, lines.size());
}

TEST(ReadmeTour, VersionPrintsTheProjectVersion) {
  const auto r = run_cli("--version", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(^fieldproof \d+\.\d+\.\d+\n$)"))) << r.out;
}

// Every command's help in one style (coordinator --help was once capitalised
// sentences with full stops): an option's description starts in lower case and ends without a
// full stop; CLI11's own --help line is left as it is.
TEST(CliHelp, EveryCommandsOptionsAreDescribedInTheCommonStyle) {
  const std::regex option_line(R"(^  (\S+)(?: \S+)*?\s{2,}(\S.*)$)");
  for (const char* command : {"validate", "run", "report", "compare", "clock", "assertions",
                              "schema", "play", "coordinator", "keygen", "world"}) {
    const auto r = run_cli(std::string(command) + " --help", false);
    ASSERT_EQ(r.exit_code, 0) << command << "\n" << r.out;
    std::istringstream in(r.out);
    bool in_options = false;
    size_t described = 0;
    std::string descriptions;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("Options:", 0) == 0 || line.rfind("Positionals:", 0) == 0) {
        in_options = true;
        continue;
      }
      if (!in_options || line.empty() || line[0] != ' ') continue;
      std::smatch m;
      if (!std::regex_match(line, m, option_line)) continue;
      const std::string desc = m[2].str();
      if (line.find("--help") != std::string::npos) continue;
      ++described;
      descriptions += desc + "\n";
      EXPECT_FALSE(std::isupper(static_cast<unsigned char>(desc[0]))) << command << ": " << line;
    }
    if (std::string(command) == "coordinator") {
      EXPECT_GE(described, 10u) << r.out;
      // No description is written in sentences ending in periods (the option column has CLI11's
      // own dots: "TEXT ..." for a repeatable option, "=." for a default of ".").
      EXPECT_EQ(descriptions.find(". "), std::string::npos) << descriptions;
      EXPECT_EQ(descriptions.find(".\n"), std::string::npos) << descriptions;
    }
  }
}

}  // namespace
}  // namespace fieldproof::integration
