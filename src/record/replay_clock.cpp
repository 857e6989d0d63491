// ReplayClock: advance() reads the next time window of the recording through the McapReader's
// indexed (or recovered) reads and hands the messages to subscribers in the recorded order.
#include "fieldproof/record/replay_clock.hpp"

#include <algorithm>
#include <utility>

namespace fieldproof::record {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

bool ReplayClock::is_control_payload(std::string_view payload) {
  // A light scan (no JSON library in this part): "kind" / "action" / "event" followed by a
  // string value starting with "sim.".
  for (std::string_view key : {"\"kind\"", "\"action\"", "\"event\""}) {
    size_t at = 0;
    while ((at = payload.find(key, at)) != std::string_view::npos) {
      size_t i = at + key.size();
      while (i < payload.size() && is_space(payload[i])) ++i;
      if (i < payload.size() && payload[i] == ':') {
        ++i;
        while (i < payload.size() && is_space(payload[i])) ++i;
        if (payload.substr(i, 5) == "\"sim.") return true;
      }
      at += key.size();
    }
  }
  return false;
}

ReplayClock::~ReplayClock() = default;

Result<std::unique_ptr<ReplayClock>> ReplayClock::open(const std::string& path,
                                                       ReplayClockOptions options) {
  std::unique_ptr<ReplayClock> clock(new ReplayClock());
  clock->options_ = std::move(options);
  if (Status s = clock->reader_.open(path, clock->options_.reader); !s.ok()) return s;
  return finish_open(std::move(clock));
}

Result<std::unique_ptr<ReplayClock>> ReplayClock::open_bytes(std::string bytes,
                                                             ReplayClockOptions options) {
  std::unique_ptr<ReplayClock> clock(new ReplayClock());
  clock->options_ = std::move(options);
  if (Status s = clock->reader_.open_bytes(std::move(bytes), clock->options_.reader); !s.ok()) {
    return s;
  }
  return finish_open(std::move(clock));
}

Result<std::unique_ptr<ReplayClock>> ReplayClock::finish_open(std::unique_ptr<ReplayClock> clock) {
  for (const std::string& topic : clock->options_.topics) {
    bool known = false;
    std::string have;
    for (const auto& [id, channel] : clock->reader_.channels()) {
      if (channel.topic == topic) known = true;
      have += (have.empty() ? "" : ", ") + channel.topic;
    }
    if (!known) {
      return Status(StatusCode::kInvalidArgument,
                    "unknown topic '" + topic + "': the recording has " +
                        (have.empty() ? std::string("no topics") : have));
    }
  }
  const Statistics& stats = clock->reader_.statistics();
  if (stats.message_count > 0) {
    clock->first_ = SimTime::from_ns(stats.message_start_time_ns);
    clock->last_ = SimTime::from_ns(stats.message_end_time_ns);
  }
  clock->now_ = clock->options_.start.is_infinite() ? clock->first_ : clock->options_.start;
  clock->read_until_ns_ = clock->now_.ns();  // the first advance includes the start
  return Result<std::unique_ptr<ReplayClock>>(std::move(clock));
}

uint64_t ReplayClock::subscribe(std::string topic, ReplayCallback callback) {
  if (topic == "*") topic.clear();
  subscribers_.push_back(Subscriber{next_id_, std::move(topic), false, std::move(callback)});
  return next_id_++;
}

uint64_t ReplayClock::subscribe_control(ReplayCallback callback) {
  subscribers_.push_back(Subscriber{next_id_, {}, true, std::move(callback)});
  return next_id_++;
}

bool ReplayClock::unsubscribe(uint64_t id) {
  return std::erase_if(subscribers_, [&](const Subscriber& s) { return s.id == id; }) > 0;
}

Result<size_t> ReplayClock::advance(Duration dt) {
  if (dt.ns() < 0) {
    return Status(StatusCode::kInvalidArgument, "ReplayClock::advance: negative dt " +
                                                    std::to_string(dt.ns()) +
                                                    " ns refused (time never goes backwards)");
  }
  return advance_to(now_ + dt);
}

Result<size_t> ReplayClock::advance_to(SimTime t) {
  if (t < now_) {
    return Status(StatusCode::kInvalidArgument, "ReplayClock::advance_to: " + format_seconds(t) +
                                                    " s is before now " + format_seconds(now_) +
                                                    " s (time never goes backwards)");
  }
  // (now, t] is [read position, t + 1) in the file's half-open log-time ranges.
  const int64_t want_end = t.is_infinite() ? t.ns() : t.ns() + 1;
  if (read_until_ns_ < want_end) {
    ReadMessageOptions query;
    query.start_ns = read_until_ns_;
    query.end_ns = std::max(want_end, (SimTime::from_ns(want_end) + options_.read_ahead).ns());
    query.topics = options_.topics;
    Status s = reader_.read_messages(query, [&](const MessageView& m) {
      pending_.push_back(Pending{m.channel, m.schema, m.sequence, m.log_time_ns, m.publish_time_ns,
                                 std::string(m.data_view())});
      return true;
    });
    if (!s.ok()) return s;
    read_until_ns_ = query.end_ns;
  }
  size_t count = 0;
  while (!pending_.empty() && pending_.front().log_time_ns < want_end) {
    // Taken off the queue first: a subscriber that throws leaves the rest for the next advance.
    const Pending p = std::move(pending_.front());
    pending_.pop_front();
    ReplayMessage msg;
    msg.topic = p.channel->topic;
    msg.schema_name = p.schema != nullptr ? std::string_view(p.schema->name) : "";
    msg.message_encoding = p.channel->message_encoding;
    msg.log_time_ns = p.log_time_ns;
    msg.publish_time_ns = p.publish_time_ns;
    msg.sequence = p.sequence;
    msg.data =
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(p.data.data()), p.data.size());
    msg.control = p.channel->topic == options_.control_topic && is_control_payload(p.data);
    if (msg.control && !options_.deliver_control) {
      ++control_skipped_;
      continue;
    }
    ++count;
    ++delivered_;
    now_ = SimTime::from_ns(p.log_time_ns);  // the message's time while it is delivered
    // Index loop: a callback may subscribe (appends) or unsubscribe (erases).
    for (size_t i = 0; i < subscribers_.size(); ++i) {
      const Subscriber& sub = subscribers_[i];
      const bool wanted = sub.control ? msg.control : sub.topic.empty() || sub.topic == msg.topic;
      if (!wanted) continue;
      ReplayCallback cb = sub.callback;
      cb(msg);
    }
  }
  now_ = t;
  return count;
}

}  // namespace fieldproof::record
