// `fieldproof play FILE.mcap --echo [--rate R] [--start-offset S] [--topics T ...]`: plays a
// recording paced by a TimeControllerClock, printing one JSON line per message on standard
// output: {"topic":"/odom","log_time":1000000000,"size":42}. Problems (a cut file, an offset past
// the end) go to standard error. Exit 0 played, 1 the file could not be read, 2 bad input.
//
// First version (issue 8, item 4): --echo only; publishing onto a coordinator, --clock, keyboard
// and control-endpoint control come next.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "fieldproof/record/mcap_reader.hpp"
#include "fieldproof/time/player_clock.hpp"

namespace fieldproof::cli {
namespace {

struct PlayArgs {
  std::string file;
  bool echo = false;
  double rate = 1.0;
  std::string start_offset = "0";
  std::vector<std::string> topics;
};

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

int run_play(const PlayArgs& a) {
  if (!a.echo) {
    std::fprintf(stderr,
                 "fieldproof play: only --echo is implemented so far (publishing onto a "
                 "coordinator is not yet)\n");
    return kExitInvalid;
  }
  if (!(a.rate > 0.0) || !std::isfinite(a.rate)) {
    std::fprintf(stderr, "fieldproof play: --rate %g refused: must be a finite number > 0\n",
                 a.rate);
    return kExitInvalid;
  }
  const auto offset = parse_duration(a.start_offset);
  if (!offset) {
    std::fprintf(stderr, "fieldproof play: --start-offset: %s\n", offset.error().c_str());
    return kExitInvalid;
  }
  record::McapReader reader;
  record::McapReaderOptions ro;
  ro.on_problem = [](const record::McapProblem& p) {
    std::fprintf(stderr, "fieldproof play: skipped at offset %llu: %s\n",
                 static_cast<unsigned long long>(p.offset), p.message.c_str());
  };
  if (record::Status s = reader.open(a.file, ro); !s.ok()) {
    std::fprintf(stderr, "fieldproof play: %s: %s\n", a.file.c_str(), s.to_string().c_str());
    return s.code() == record::StatusCode::kNotMcap ? kExitInvalid : kExitFailed;
  }
  for (const std::string& topic : a.topics) {
    bool known = false;
    std::string have;
    for (const auto& [id, channel] : reader.channels()) {
      known = known || channel.topic == topic;
      have += (have.empty() ? "" : ", ") + channel.topic;
    }
    if (!known) {
      std::fprintf(stderr, "fieldproof play: unknown topic '%s' (the recording has: %s)\n",
                   topic.c_str(), have.empty() ? "no topics" : have.c_str());
      return kExitInvalid;
    }
  }
  const record::Statistics& stats = reader.statistics();
  const SimTime first = SimTime::from_ns(stats.message_start_time_ns);
  const SimTime last = SimTime::from_ns(stats.message_end_time_ns);
  SimTime start = first + *offset;
  if (stats.message_count > 0 && start > last) {
    std::fprintf(stderr,
                 "fieldproof play: --start-offset %s is past the end of the recording (%s s "
                 "long); clamped to its last message\n",
                 a.start_offset.c_str(), format_seconds(last - first).c_str());
    start = last;
  }

  TimeControllerClock clock({.start = start, .rate = a.rate, .start_paused = false});
  record::ReadMessageOptions q;
  q.start_ns = start.ns();
  q.topics = a.topics;
  uint64_t played = 0;
  const record::Status s = reader.read_messages(q, [&](const record::MessageView& m) {
    while (!clock.sleep_until(SimTime::from_ns(m.log_time_ns), Duration::infinite())) {
    }
    const std::string line = "{\"topic\":" + json_string(m.channel->topic) +
                             ",\"log_time\":" + std::to_string(m.log_time_ns) +
                             ",\"size\":" + std::to_string(m.data.size()) + "}\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
    ++played;
    return true;
  });
  if (!s.ok()) {
    std::fprintf(stderr, "fieldproof play: %s\n", s.to_string().c_str());
    return kExitFailed;
  }
  if (!reader.problems().empty()) {
    std::fprintf(stderr,
                 "fieldproof play: the recording is damaged or cut short: played its %llu "
                 "complete messages, skipped %zu damaged part(s)\n",
                 static_cast<unsigned long long>(played), reader.problems().size());
  }
  return kExitOk;
}

}  // namespace

void add_play_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PlayArgs>();
  CLI::App* cmd = app.add_subcommand("play", "Play a recording (MCAP), paced by the player clock");
  cmd->add_option("file", args->file, "the recording (.mcap)")->required();
  cmd->add_flag("--echo", args->echo,
                "print each message as a JSON line {topic, log_time, size} on standard output");
  cmd->add_option("--rate", args->rate, "playback rate (> 0; default 1)");
  cmd->add_option("--start-offset", args->start_offset,
                  "start this far after the first message (e.g. 2.5s; default 0)");
  cmd->add_option("--topics", args->topics, "play only these topics");
  cmd->callback([args, exit_code] { *exit_code = run_play(*args); });
}

}  // namespace fieldproof::cli
