// `fieldproof report`: the CLI paths against the built executable (stdout, --write, exit 2).
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <tinyxml2.h>

#include <nlohmann/json.hpp>

#include "report/fixture.hpp"

namespace fieldproof::report {
namespace {

using testing::fixture_copy;
using testing::fresh_dir;
using testing::read_file;
using testing::write_file;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `fieldproof report ARGS` in `cwd`.
Result run(const std::string& args, const std::filesystem::path& cwd) {
  const auto err = fresh_dir("stderr") / "err.txt";
  const std::string cmd = "cd " + quote(cwd.string()) + " && " + quote(FIELDPROOF_EXE) +
                          " report " + args + " 2>" + quote(err.string());
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.err = read_file(err);
  return r;
}

TEST(ReportCli, PrintsMarkdownByDefaultFromARunDirectory) {
  const auto d = fixture_copy("failed");
  const Result r = run(quote(d.string()), d.parent_path());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("# fieldproof run depot-fail-1: FAIL"), std::string::npos) << r.out;
}

TEST(ReportCli, AcceptsTheRunJsonFile) {
  const auto d = fixture_copy("passed");
  const Result r = run(quote((d / "run.json").string()) + " --format json", d.parent_path());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["run_id"], "depot-pass-1");
}

TEST(ReportCli, AcceptsARunIdUnderRuns) {
  const auto root = fresh_dir("ws");
  std::filesystem::create_directories(root / "runs");
  std::filesystem::copy(std::filesystem::path(FIELDPROOF_REPORT_DATA) / "timeout",
                        root / "runs" / "rt-timeout", std::filesystem::copy_options::recursive);
  const Result r = run("rt-timeout --format junit", root);
  EXPECT_EQ(r.code, 0) << r.err;
  tinyxml2::XMLDocument doc;
  EXPECT_EQ(doc.Parse(r.out.c_str()), tinyxml2::XML_SUCCESS);
}

TEST(ReportCli, PrintsHtml) {
  const auto d = fixture_copy("passed");
  const Result r = run(quote(d.string()) + " --format html", d.parent_path());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("class=\"vehicle-path\""), std::string::npos);
}

TEST(ReportCli, WriteRewritesTheFourFiles) {
  const auto d = fixture_copy("passed");
  write_file(d / "report.md", "stale");
  const Result r = run(quote(d.string()) + " --write", d.parent_path());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_file(d / "report.md"), r.out);
  for (const char* f : {"report.json", "junit.xml", "report.html"}) {
    EXPECT_TRUE(std::filesystem::is_regular_file(d / f)) << f;
  }
}

TEST(ReportCli, MissingRunExitsTwoWithAMessage) {
  const auto d = fresh_dir("none");
  const Result r = run("no-such-run", d);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no-such-run"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(ReportCli, InvalidRunJsonExitsTwoWithAMessage) {
  const auto d = fresh_dir("bad");
  write_file(d / "run.json", "not json");
  const Result r = run(quote(d.string()), d);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
}

TEST(ReportCli, UnreadableRunJsonExitsTwo) {
  const auto d = fresh_dir("dir");
  std::filesystem::create_directories(d / "run" / "run.json");  // a directory, not a file
  const Result r = run(quote((d / "run").string()), d);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("run.json"), std::string::npos) << r.err;
}

TEST(ReportCli, UnknownFormatExitsTwo) {
  const auto d = fixture_copy("passed");
  const Result r = run(quote(d.string()) + " --format pdf", d.parent_path());
  EXPECT_EQ(r.code, 2);
}

}  // namespace
}  // namespace fieldproof::report
