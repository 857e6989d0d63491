// ReplayClock: a SimClock-like clock read from an MCAP recording (seed section 7).
//
// Time moves only when advance() / advance_to() is called; each advance delivers every recorded
// message whose log time is in (now, now + dt], in the recorded total order — log time, then
// file order, which is the order the recorder wrote them: (stamp, publisher, sequence) — to the
// subscribers of its topic.
//
//   auto replay = ReplayClock::open("run/recording.mcap");
//   if (!replay.ok()) return replay.status();              // not MCAP, unreadable
//   ReplayClock& r = **replay;
//   r.subscribe("/odom", [](const ReplayMessage& m) { use(m.log_time_ns, m.data); });
//   while (r.now() < r.end_time()) (void)r.advance(milliseconds(10));
//   for (const auto& p : r.problems()) log(p.offset, p.message);   // a cut file: what was skipped
//
// Contracts (each tested in tests/player/replay_clock_test.cpp):
//   * now() starts at options.start (default: the first message's log time, or 0 for an empty
//     file). The first advance covers [start, start + dt] — a message stamped exactly at the
//     start is delivered — and every later one (now, now + dt]: no message is delivered twice
//     or skipped, whatever the steps.
//   * Order: log time, ties in file order. Within one message, subscribers in subscription order;
//     topic "*" subscribes to every topic.
//   * Control messages — on options.control_topic (default "/fieldproof/events") whose JSON payload
//     names a "sim.*" kind ("kind", "action" or "event" key, e.g. {"kind":"sim.pause"}) — are the
//     recorded run's control actions. They are not delivered (nor executed) unless
//     options.deliver_control is true; control_skipped() counts those held back.
//     subscribe_control() receives them when delivered (as well as the topic's subscribers).
//   * A truncated or damaged file plays what is complete; problems() lists what the reader
//     skipped (file offset and reason) and complete() is false.
//   * advance(dt) with dt < 0, or advance_to(t) before now(), is refused (kInvalidArgument) and
//     time does not move. A subscriber that throws: the exception propagates out of advance(),
//     now() is then that message's log time and the following messages are delivered by the next
//     advance (nothing lost).
//
// Threads: one thread drives a ReplayClock (like SimClock). Not copyable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/record/mcap_reader.hpp"
#include "fieldproof/record/mcap_types.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::record {

// One delivered message; the views are valid during the callback only.
struct ReplayMessage {
  std::string_view topic;
  std::string_view schema_name;       // "" when the channel has no schema
  std::string_view message_encoding;  // e.g. "protobuf", "json"
  int64_t log_time_ns = 0;
  int64_t publish_time_ns = 0;
  uint32_t sequence = 0;
  std::span<const uint8_t> data;
  bool control = false;  // a recorded control action (see above)
  std::string_view data_view() const {
    return {reinterpret_cast<const char*>(data.data()), data.size()};
  }
};

using ReplayCallback = std::function<void(const ReplayMessage&)>;

struct ReplayClockOptions {
  // now() at open; unset (infinite()) = the first message's log time (0 for an empty file).
  SimTime start = SimTime::infinite();
  // Only these topics are read (empty: all). An unknown topic is refused at open with
  // kInvalidArgument naming it and the topics the file has.
  std::vector<std::string> topics;
  // The topic carrying the recorded run's events, and whether its sim.* control messages are
  // delivered.
  std::string control_topic = "/fieldproof/events";
  bool deliver_control = false;
  // Each read from the file covers at least this much log time beyond the advance's target; the
  // messages read ahead are kept (copied) until their time comes. Small advances then do not
  // decompress the same chunk again and again. Zero: read exactly each advance's window.
  Duration read_ahead = seconds(1);
  // Passed to the McapReader (on_problem sees every problem as it is found).
  McapReaderOptions reader;
};

class ReplayClock {
 public:
  static Result<std::unique_ptr<ReplayClock>> open(const std::string& path,
                                                   ReplayClockOptions options = {});
  static Result<std::unique_ptr<ReplayClock>> open_bytes(std::string bytes,
                                                         ReplayClockOptions options = {});
  ~ReplayClock();
  ReplayClock(const ReplayClock&) = delete;
  ReplayClock& operator=(const ReplayClock&) = delete;

  SimTime now() const { return now_; }
  // First and last message log times of the recording (both 0 when it has no messages).
  SimTime start_time() const { return first_; }
  SimTime end_time() const { return last_; }

  // Delivers the messages in (now, now + dt] (see the contracts) and sets now() = now + dt.
  // Returns the number of messages delivered.
  Result<size_t> advance(Duration dt);
  Result<size_t> advance_to(SimTime t);

  // Topic "*" (or "") = every topic. Returns an id for unsubscribe().
  uint64_t subscribe(std::string topic, ReplayCallback callback);
  uint64_t subscribe_control(ReplayCallback callback);
  bool unsubscribe(uint64_t id);

  uint64_t delivered() const { return delivered_; }
  uint64_t control_skipped() const { return control_skipped_; }
  // What the reader skipped in a cut or damaged file (empty for a sound file).
  const std::vector<McapProblem>& problems() const { return reader_.problems(); }
  // True when the file has its footer and nothing was skipped.
  bool complete() const { return reader_.has_footer() && reader_.problems().empty(); }
  const McapReader& reader() const { return reader_; }

  // True when `payload` on the control topic is a sim.* control action (exposed for tests).
  static bool is_control_payload(std::string_view payload);

 private:
  ReplayClock() = default;
  static Result<std::unique_ptr<ReplayClock>> finish_open(std::unique_ptr<ReplayClock> clock);

  struct Subscriber {
    uint64_t id = 0;
    std::string topic;     // "" = every topic
    bool control = false;  // subscribe_control: control messages only
    ReplayCallback callback;
  };

  ReplayClockOptions options_;
  McapReader reader_;
  SimTime now_;
  // A message read ahead of time (owned copy).
  struct Pending {
    const Channel* channel = nullptr;
    const Schema* schema = nullptr;
    uint32_t sequence = 0;
    int64_t log_time_ns = 0;
    int64_t publish_time_ns = 0;
    std::string data;
  };
  // Messages read from the file and not yet delivered, in order; the file has been read up to
  // (excluding) read_until_ns_: reads cover consecutive half-open log-time ranges, so nothing
  // is read twice or missed.
  std::deque<Pending> pending_;
  int64_t read_until_ns_ = 0;
  SimTime first_;
  SimTime last_;
  std::vector<Subscriber> subscribers_;
  uint64_t next_id_ = 1;
  uint64_t delivered_ = 0;
  uint64_t control_skipped_ = 0;
};

}  // namespace fieldproof::record
