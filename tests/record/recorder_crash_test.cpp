// A recording process SIGKILLed mid-way: the file has no summary, and McapReader's scan gives
// back every message up to the last closed chunk (tests/record/recorder_crash_helper.cpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "fieldproof/record/mcap_reader.hpp"
#include "record/mcap_test_util.hpp"

#ifndef FIELDPROOF_RECORDER_CRASH_HELPER
#error "FIELDPROOF_RECORDER_CRASH_HELPER must name the helper executable"
#endif

namespace fieldproof::record {
namespace {

namespace fs = std::filesystem;

// The helper, started with its stdout and stdin on pipes.
struct Child {
  pid_t pid = -1;
  int out = -1;  // read end of its stdout
  int in = -1;   // write end of its stdin
};

Child start_helper(const fs::path& file, int n) {
  int out_pipe[2];
  int in_pipe[2];
  Child c;
  if (::pipe(out_pipe) != 0 || ::pipe(in_pipe) != 0) return c;
  const std::string count = std::to_string(n);
  const std::string path = file.string();
  c.pid = ::fork();
  if (c.pid == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(in_pipe[0], STDIN_FILENO);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    ::execl(FIELDPROOF_RECORDER_CRASH_HELPER, FIELDPROOF_RECORDER_CRASH_HELPER, path.c_str(),
            count.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(in_pipe[0]);
  c.out = out_pipe[0];
  c.in = in_pipe[1];
  return c;
}

// Blocks until the child prints a line (or closes its stdout).
std::string read_line(int fd) {
  std::string line;
  char ch = 0;
  while (::read(fd, &ch, 1) == 1 && ch != '\n') line.push_back(ch);
  return line;
}

TEST(RecorderCrash, SigkilledRecordingGivesBackEveryMessageUpToTheLastClosedChunk) {
  const fs::path dir = testing::temp_dir("recorder_crash");
  const fs::path file = dir / "recording.mcap";
  constexpr int kMessages = 500;
  Child child = start_helper(file, kMessages);
  ASSERT_GT(child.pid, 0);
  ASSERT_EQ(read_line(child.out), "ready");
  ASSERT_EQ(::kill(child.pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child.pid, &status, 0), child.pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  ::close(child.out);
  ::close(child.in);

  McapReader r;
  ASSERT_TRUE(r.open(file.string()).ok());
  EXPECT_FALSE(r.has_footer());
  EXPECT_FALSE(r.used_summary());
  EXPECT_EQ(r.chunk_count(), 1u);
  std::map<std::string, std::vector<uint32_t>> seqs;
  ASSERT_TRUE(r.read_messages({}, [&](const MessageView& m) {
                 seqs[m.channel->topic].push_back(m.sequence);
                 return true;
               }).ok());
  ASSERT_EQ(seqs["/a"].size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(seqs["/a"][i], static_cast<uint32_t>(i + 1));
  EXPECT_EQ(seqs["/fieldproof/events"].size(), 1u);
  // Written after the last closed chunk: lost with the process, as documented.
  EXPECT_EQ(seqs.count("/late"), 0u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fieldproof::record
