// `fieldproof play FILE.mcap --echo`: the real executable on a recording written here. Rates are
// high so the paced playback takes milliseconds.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fieldproof/record/mcap_writer.hpp"

namespace fieldproof::record {
namespace {

struct Ran {
  int exit_code = -1;
  std::string out;  // stdout and stderr, stderr lines prefixed "E: " after stdout
  std::vector<std::string> lines;
  std::string err;
};

std::filesystem::path temp_dir() {
  auto dir =
      std::filesystem::temp_directory_path() / ("fieldproof_play_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Ran run(const std::string& args) {
  const auto dir = temp_dir();
  const std::string out = (dir / "stdout.txt").string();
  const std::string err = (dir / "stderr.txt").string();
  const std::string cmd = std::string(FIELDPROOF_EXE) + " play " + args + " >" + out + " 2>" + err;
  Ran r;
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) r.lines.push_back(line);
  return r;
}

// Three messages on /a and /b, two sharing a stamp; chunks of two messages.
std::string write_recording(const std::string& name, uint64_t* second_chunk = nullptr) {
  const auto path = temp_dir() / name;
  McapWriterOptions o;
  o.compression = Compression::kNone;
  McapWriter w(o);
  EXPECT_TRUE(w.open(path.string()).ok());
  auto a = w.add_channel("/a", "json", 0);
  auto b = w.add_channel("/b", "json", 0);
  EXPECT_TRUE(w.write(*a, 0, SimTime::from_ns(1'000'000'000), SimTime::from_ns(0), "xx").ok());
  EXPECT_TRUE(w.write(*b, 0, SimTime::from_ns(1'010'000'000), SimTime::from_ns(0), "yyy").ok());
  EXPECT_TRUE(w.close_chunk().ok());
  if (second_chunk != nullptr) *second_chunk = w.bytes_written();
  EXPECT_TRUE(w.write(*a, 1, SimTime::from_ns(1'010'000'000), SimTime::from_ns(0), "z").ok());
  EXPECT_TRUE(w.close().ok());
  return path.string();
}

TEST(PlayCommandTest, echo_prints_json_lines_in_recorded_order) {
  const Ran r = run(write_recording("order.mcap") + " --echo --rate 100");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines, (std::vector<std::string>{
                         R"({"topic":"/a","log_time":1000000000,"size":2})",
                         R"({"topic":"/b","log_time":1010000000,"size":3})",
                         R"({"topic":"/a","log_time":1010000000,"size":1})",
                     }));
}

TEST(PlayCommandTest, topics_and_start_offset_select_messages) {
  const Ran r = run(write_recording("select.mcap") + " --echo --rate 100 --start-offset 5ms " +
                    "--topics /a");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines,
            (std::vector<std::string>{R"({"topic":"/a","log_time":1010000000,"size":1})"}));
}

TEST(PlayCommandTest, rate_zero_refused) {
  const Ran r = run(write_recording("rate.mcap") + " --echo --rate 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--rate 0 refused"), std::string::npos) << r.err;
}

TEST(PlayCommandTest, unknown_topic_refused) {
  const Ran r = run(write_recording("topic.mcap") + " --echo --topics /nope");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown topic '/nope'"), std::string::npos) << r.err;
}

TEST(PlayCommandTest, start_offset_past_the_end_is_clamped_and_said) {
  const Ran r = run(write_recording("past.mcap") + " --echo --start-offset 10s");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("clamped"), std::string::npos) << r.err;
  EXPECT_EQ(r.lines.size(), 2u);  // the two messages at the last stamp
}

TEST(PlayCommandTest, cut_file_plays_its_complete_part_and_says_so) {
  uint64_t second_chunk = 0;
  const std::string full = slurp(write_recording("full.mcap", &second_chunk));
  const auto cut = temp_dir() / "cut.mcap";
  {
    std::ofstream out(cut, std::ios::binary);
    out << full.substr(0, second_chunk + 20);  // inside the second chunk
  }
  const Ran r = run(cut.string() + " --echo --rate 100");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines.size(), 2u);  // the first chunk
  EXPECT_NE(r.err.find("cut short"), std::string::npos) << r.err;
}

TEST(PlayCommandTest, not_mcap_refused) {
  const auto bad = temp_dir() / "bad.mcap";
  {
    std::ofstream out(bad);
    out << "hello";
  }
  const Ran r = run(bad.string() + " --echo");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.err.empty());
}

}  // namespace
}  // namespace fieldproof::record
