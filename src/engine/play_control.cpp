// The player's control commands (handle_play_command): text in, one JSON object out, built with
// nlohmann::ordered_json so the keys keep the order clients have always seen.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fieldproof/engine/play_session.hpp"

namespace fieldproof::engine {
namespace {

using Json = nlohmann::ordered_json;

// A command or a message may hold any bytes (a client sent them): invalid UTF-8 is replaced
// (U+FFFD) instead of making dump() throw.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string refused(const std::string& message) {
  return dump(Json{{"ok", false}, {"error", message}});
}

std::string clock_reply(const ClockStatus& s) {
  return s.ok() ? dump(Json{{"ok", true}}) : refused(s.message());
}

// A whole rate prints as an integer ("rate":2), as it always has; others in full.
Json rate_value(double rate) {
  if (std::isfinite(rate) && rate == std::floor(rate) && std::fabs(rate) < 9.0e15) {
    return static_cast<int64_t>(rate);
  }
  return rate;
}

// Seconds, rounded to the millisecond (the offset has always been said to the millisecond).
double seconds_ms(Duration d) {
  const int64_t ns = d.ns();
  const int64_t ms = ns >= 0 ? (ns + 500'000) / 1'000'000 : -((-ns + 500'000) / 1'000'000);
  return static_cast<double>(ms) / 1000.0;
}

std::string set_rate(record::Player& player, const std::string& text) {
  char* end = nullptr;
  const double rate = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0') {
    return refused("set_rate: '" + text + "' is not a number");
  }
  return clock_reply(player.set_rate(rate));
}

std::string burst(record::Player& player, const std::string& text) {
  char* end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n <= 0) {
    return refused("burst: '" + text + "' is not a count > 0");
  }
  uint64_t played = 0;
  const ClockStatus s = player.burst(static_cast<uint64_t>(n), &played);
  if (!s.ok()) return refused(s.message());
  return dump(Json{{"ok", true}, {"played", played}});
}

std::string seek(record::Player& player, const std::string& text,
                 const PlayDiagnostic& diagnostic) {
  const auto d = parse_duration(text);
  if (!d.ok()) return refused("seek: " + d.status().message());
  const record::SeekResult r = player.seek(player.status().range_start + *d);
  if (r.clamped && diagnostic) diagnostic(r.message);
  Json reply{{"ok", true}, {"to", r.to.ns()}, {"clamped", r.clamped}};
  if (r.clamped) reply["message"] = r.message;
  return dump(reply);
}

}  // namespace

std::string play_status_json(const record::PlayerStatus& s) {
  return dump(Json{{"ok", true},
                   {"paused", s.paused},
                   {"rate", rate_value(s.rate)},
                   {"now", s.now.ns()},
                   {"offset", seconds_ms(s.now - s.range_start)},
                   {"played", s.played},
                   {"position", s.position},
                   {"total", s.total},
                   {"loops", s.loops}});
}

std::string handle_play_command(record::Player& player, std::string_view command,
                                const PlayDiagnostic& diagnostic) {
  std::istringstream in{std::string(command)};
  std::string verb;
  std::string argument;
  in >> verb >> argument;
  if (verb == "pause") return clock_reply(player.pause());
  if (verb == "resume") return clock_reply(player.resume());
  if (verb == "toggle") return clock_reply(player.toggle());
  if (verb == "play_next") return clock_reply(player.play_next());
  if (verb == "status") return play_status_json(player.status());
  if (verb == "set_rate") return set_rate(player, argument);
  if (verb == "burst") return burst(player, argument);
  if (verb == "seek") return seek(player, argument, diagnostic);
  return refused("unknown command '" + verb +
                 "' (pause, resume, toggle, set_rate R, seek T, play_next, burst N, status)");
}

}  // namespace fieldproof::engine
