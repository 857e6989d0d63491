// `fieldproof play FILE.mcap --echo`: the real executable on a recording written here. Rates are
// high so the paced playback takes milliseconds.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <chrono>
#include <future>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "fieldproof/lockstep/codec.hpp"
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

// --topics takes one topic per flag: the file after it is the file, not a
// second topic.
TEST(PlayCommandTest, topics_before_the_file_do_not_swallow_it) {
  const std::string file = write_recording("before.mcap");
  const Ran r = run("--echo --rate 100 --topics /a " + file);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines, (std::vector<std::string>{
                         R"({"topic":"/a","log_time":1000000000,"size":2})",
                         R"({"topic":"/a","log_time":1010000000,"size":1})",
                     }));
}

TEST(PlayCommandTest, topics_repeated_or_comma_separated_select_several) {
  const std::string file = write_recording("several.mcap");
  for (const std::string& topics :
       {std::string("--topics /a --topics /b"), std::string("--topics /a,/b")}) {
    const Ran r = run(topics + " --echo --rate 100 " + file);
    EXPECT_EQ(r.exit_code, 0) << topics << ": " << r.err;
    EXPECT_EQ(r.lines.size(), 3u) << topics;
  }
}

TEST(PlayCommandTest, help_lists_the_players_keys) {
  const Ran r = run("--help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* key : {"space", "right arrow", "up / down", "seek back 5 s", "seek forward 5 s",
                          "q              quit"}) {
    EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
  }
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

// ---- Through a pseudo-terminal (keyboard, progress line) and the control endpoint.

struct Child {
  pid_t pid = -1;
  int fd = -1;  // the terminal's master side
  std::string seen;
};

Child spawn_on_pty(const std::vector<std::string>& args) {
  Child c;
  c.pid = ::forkpty(&c.fd, nullptr, nullptr, nullptr);
  if (c.pid == 0) {
    std::vector<char*> argv;
    std::string exe = FIELDPROOF_EXE;
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  return c;
}

// Reads the terminal until `needle` shows up (true) or 10 s pass without it (false).
bool read_until(Child& c, const std::string& needle) {
  for (int waited_ms = 0; c.seen.find(needle) == std::string::npos;) {
    pollfd pfd{c.fd, POLLIN, 0};
    const int r = ::poll(&pfd, 1, 100);
    if (r <= 0) {
      waited_ms += 100;
      if (waited_ms >= 10'000) return false;
      continue;
    }
    char buf[512];
    const ssize_t n = ::read(c.fd, buf, sizeof buf);
    if (n <= 0) return c.seen.find(needle) != std::string::npos;
    c.seen.append(buf, static_cast<size_t>(n));
  }
  return true;
}

// The exit code, or -1 when the child did not end within 10 s (then it is killed).
int await_exit(Child& c) {
  auto status = std::async(std::launch::async, [pid = c.pid] {
    int st = 0;
    ::waitpid(pid, &st, 0);
    return st;
  });
  // Drain the terminal meanwhile so the child never blocks on a full buffer.
  bool open = true;
  int waited_ms = 0;
  while (status.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
    if (waited_ms >= 10'000) {
      ::kill(c.pid, SIGKILL);
      (void)status.get();
      ::close(c.fd);
      return -1;
    }
    if (!open) {
      (void)status.wait_for(std::chrono::milliseconds(100));
      waited_ms += 100;
      continue;
    }
    pollfd pfd{c.fd, POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) {
      waited_ms += 100;
      continue;
    }
    char buf[512];
    const ssize_t n = ::read(c.fd, buf, sizeof buf);
    if (n <= 0) open = false;
    if (n > 0) c.seen.append(buf, static_cast<size_t>(n));
  }
  const int st = status.get();
  ::close(c.fd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(PlayCommandTest, keyboard_right_arrow_plays_one_message_and_space_resumes) {
  Child c = spawn_on_pty({"play", write_recording("keys.mcap"), "--echo", "--start-paused"});
  ASSERT_GT(c.pid, 0);
  ASSERT_TRUE(read_until(c, "[paused]")) << c.seen;
  EXPECT_EQ(c.seen.find("log_time"), std::string::npos) << c.seen;
  ASSERT_EQ(::write(c.fd, "\x1b[C", 3), 3);  // right arrow: exactly the next message
  ASSERT_TRUE(read_until(c, R"("log_time":1000000000)")) << c.seen;
  EXPECT_EQ(c.seen.find(R"("log_time":1010000000)"), std::string::npos) << c.seen;
  ASSERT_EQ(::write(c.fd, " ", 1), 1);  // space: resume
  ASSERT_TRUE(read_until(c, R"("log_time":1010000000,"size":1)")) << c.seen;
  EXPECT_EQ(await_exit(c), 0) << c.seen;
}

TEST(PlayCommandTest, ctrl_c_while_paused_ends_promptly_with_130) {
  Child c = spawn_on_pty({"play", write_recording("sigint.mcap"), "--echo", "--start-paused"});
  ASSERT_GT(c.pid, 0);
  ASSERT_TRUE(read_until(c, "[paused]")) << c.seen;
  ::kill(c.pid, SIGINT);
  EXPECT_EQ(await_exit(c), 130) << c.seen;
}

// `fieldproof clock ARGS`, the client users run against a player's control endpoint.
Ran clock(const std::string& args) {
  const auto dir = temp_dir();
  const std::string out = (dir / "clock_stdout.txt").string();
  const std::string err = (dir / "clock_stderr.txt").string();
  const std::string cmd = std::string(FIELDPROOF_EXE) + " clock " + args + " >" + out + " 2>" + err;
  Ran r;
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Raw bytes to the endpoint on a DEALER (no client library between), the reply frame decoded.
lockstep::Frame raw_request(const std::string& endpoint, const std::string& bytes) {
  void* ctx = zmq_ctx_new();
  void* dealer = zmq_socket(ctx, ZMQ_DEALER);
  const int timeout_ms = 10'000;
  zmq_setsockopt(dealer, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
  const int linger = 0;
  zmq_setsockopt(dealer, ZMQ_LINGER, &linger, sizeof linger);
  lockstep::Frame reply = lockstep::Error{lockstep::ErrorCode::kTimeout, "(no reply)"};
  if (zmq_connect(dealer, endpoint.c_str()) == 0 &&
      zmq_send(dealer, bytes.data(), bytes.size(), 0) >= 0) {
    char buf[4096];
    const int n = zmq_recv(dealer, buf, sizeof buf, 0);
    if (n >= 0) {
      lockstep::DecodeResult d =
          lockstep::decode_frame(std::string_view(buf, static_cast<size_t>(n)));
      reply = d ? std::move(d).frame() : lockstep::Frame{d.error()};
    }
  }
  zmq_close(dealer);
  zmq_ctx_term(ctx);
  return reply;
}

TEST(PlayCommandTest, control_endpoint_takes_fieldproof_clock) {
  const std::string endpoint = "ipc://" + (temp_dir() / "control.ipc").string();
  Child c = spawn_on_pty(
      {"play", write_recording("control.mcap"), "--echo", "--start-paused", "--control", endpoint});
  ASSERT_GT(c.pid, 0);
  const Ran status = clock(endpoint + " status");
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.out,
            "state: paused\nrate: 1\nnow: 1000000000\noffset_s: 0\nplayed: 0\n"
            "position: 0/3\nloops: 0\n")
      << status.err;
  const Ran next = clock(endpoint + " play-next");
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_NE(next.out.find("played: 1\n"), std::string::npos) << next.out;
  EXPECT_NE(next.out.find("done: play-next\n"), std::string::npos) << next.out;
  ASSERT_TRUE(read_until(c, R"("log_time":1000000000)")) << c.seen;
  const Ran seek = clock(endpoint + " seek 99s");
  EXPECT_EQ(seek.exit_code, 0) << seek.err;
  EXPECT_NE(seek.out.find("clamped: true\n"), std::string::npos) << seek.out;
  EXPECT_NE(seek.out.find("message: "), std::string::npos) << seek.out;
  const Ran zero = clock(endpoint + " rate 0");
  EXPECT_EQ(zero.exit_code, 2) << zero.out;
  EXPECT_NE(zero.err.find("rate"), std::string::npos) << zero.err;
  const Ran step = clock(endpoint + " step --steps 1");
  EXPECT_EQ(step.exit_code, 2) << step.out;
  EXPECT_NE(step.err.find("this is a player"), std::string::npos) << step.err;
  // Bytes that are no frame: an Error{Malformed}, and the player keeps serving.
  const lockstep::Frame bogus = raw_request(endpoint, "bogus");
  ASSERT_TRUE(std::holds_alternative<lockstep::Error>(bogus));
  EXPECT_EQ(std::get<lockstep::Error>(bogus).code, lockstep::ErrorCode::kMalformed);
  const Ran rate = clock(endpoint + " rate 100");
  EXPECT_EQ(rate.exit_code, 0) << rate.err;
  EXPECT_NE(rate.out.find("rate: 100\n"), std::string::npos) << rate.out;
  const Ran resume = clock(endpoint + " resume");
  EXPECT_EQ(resume.exit_code, 0) << resume.err;
  EXPECT_EQ(await_exit(c), 0) << c.seen;
}

}  // namespace
}  // namespace fieldproof::record
