// Rate limiting of the server's refusal log lines: at most one line per peer per interval; the
// next line admitted for a peer says how many were suppressed meanwhile, and flush() reports the
// count of a peer that went on being suppressed once per interval. A refused peer that reconnects
// every 100 ms (ZeroMQ's default), or floods garbage frames, would otherwise fill the log.
// A peer is a readable key ("frames from 127.0.0.1", "peers with key K"): flush() names it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "fieldproof/time/duration.hpp"

namespace fieldproof::lockstep::zmqd {

class RateLimitedLog {
 public:
  explicit RateLimitedLog(Duration interval) : interval_(interval) {}

  // The line to log for `peer` at wall time `now`, or nullopt when it is suppressed.
  std::optional<std::string> admit(const std::string& peer, SimTime now, const std::string& line) {
    if (peers_.size() > kMaxPeers) prune(now);
    auto it = peers_.find(peer);
    if (it != peers_.end() && now - it->second.last < interval_) {
      ++it->second.suppressed;
      return std::nullopt;
    }
    std::string out = line;
    if (it != peers_.end() && it->second.suppressed > 0) {
      out += " (" + std::to_string(it->second.suppressed) +
             " more from this peer suppressed in the " + format_seconds(now - it->second.last) +
             " s before)";
    }
    peers_[peer] = Entry{now, 0};
    return out;
  }

  // For every peer with lines suppressed for an interval or longer: "<peer>: N more refused in
  // the last S s"; its count starts again.
  std::vector<std::string> flush(SimTime now) {
    std::vector<std::string> lines;
    for (auto& [peer, e] : peers_) {
      if (e.suppressed == 0 || now - e.last < interval_) continue;
      lines.push_back(peer + ": " + std::to_string(e.suppressed) + " more refused in the last " +
                      format_seconds(now - e.last) + " s (one line per peer per " +
                      format_seconds(interval_) + " s)");
      e = Entry{now, 0};
    }
    return lines;
  }

 private:
  static constexpr size_t kMaxPeers = 4096;
  struct Entry {
    SimTime last;
    uint64_t suppressed = 0;
  };
  // Forgets peers quiet for an interval with nothing suppressed (nothing left to report).
  void prune(SimTime now) {
    for (auto it = peers_.begin(); it != peers_.end();) {
      if (now - it->second.last >= interval_ && it->second.suppressed == 0) {
        it = peers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  Duration interval_;
  std::unordered_map<std::string, Entry> peers_;
};

}  // namespace fieldproof::lockstep::zmqd
