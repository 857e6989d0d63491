// The checked reading of a user's input file (util/input_file.hpp): a refusal is a Status with a
// code and the message the CLI prints, a read is a Result holding the text, and lines come one by
// one with an over-long line reported, not held.
#include "fieldproof/util/input_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fieldproof::util {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() /
                     ("fieldproof_input_file_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

fs::path write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

TEST(InputFile, ReadsARegularFileWhole) {
  const fs::path f = write(fresh_dir("whole") / "a.yaml", "name: x\n");
  const Result<std::string> r = read_input_file(f, kMaxScenarioBytes, "the scenario");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(*r, "name: x\n");
  EXPECT_TRUE(check_input_file(f, kMaxScenarioBytes, "the scenario").ok());
}

TEST(InputFile, AMissingFileIsNotFoundNamingIt) {
  const fs::path f = fresh_dir("missing") / "nope.yaml";
  const Result<std::string> r = read_input_file(f, kMaxScenarioBytes, "the scenario");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "the scenario '" + f.string() + "' does not exist");
}

TEST(InputFile, ADirectoryAndAFifoAreRefusedUnread) {
  const fs::path d = fresh_dir("kinds");
  const Status dir = check_input_file(d, kMaxScenarioBytes, "the scenario");
  EXPECT_EQ(dir.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dir.message().find("is a directory, not a regular file"), std::string::npos)
      << dir.message();
  const fs::path fifo = d / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result<std::string> r = read_input_file(fifo, kMaxScenarioBytes, "the scenario");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("is a FIFO (named pipe)"), std::string::npos)
      << r.status().message();
}

TEST(InputFile, AFileOverTheLimitIsRefusedWithBothSizes) {
  const fs::path f = write(fresh_dir("big") / "big.json", std::string(2048, 'x'));
  const Result<std::string> r = read_input_file(f, 1024, "run.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "run.json '" + f.string() +
                                      "' is 2 KiB, larger than the 1 KiB limit for run.json; "
                                      "nothing was read");
}

TEST(InputFile, LinesComeOneByOneAndAnOverLongOneIsReportedEmpty) {
  const fs::path f =
      write(fresh_dir("lines") / "s.jsonl", "one\n" + std::string(40, 'y') + "\n\nlast");
  CheckedFile in(f, kNoSizeLimit, "samples.jsonl");
  ASSERT_TRUE(in.status().ok()) << in.status().to_string();
  LineReader lines(in.fd(), 16);
  std::vector<std::string> texts;
  std::vector<bool> too_long;
  std::vector<int> numbers;
  while (const std::optional<LineReader::Line> line = lines.next()) {
    texts.emplace_back(line->text);
    too_long.push_back(line->too_long);
    numbers.push_back(lines.line_number());
  }
  EXPECT_EQ(texts, (std::vector<std::string>{"one", "", "", "last"}));
  EXPECT_EQ(too_long, (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(numbers, (std::vector<int>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace fieldproof::util
