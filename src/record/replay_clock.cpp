// ReplayClock: advance() reads the next time window of the recording through the McapReader's
// indexed (or recovered) reads and hands the messages to subscribers in the recorded order.
#include "fieldproof/record/replay_clock.hpp"

#include <exception>
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
  clock->resume_ns_ = clock->now_.ns();
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
  ReadMessageOptions query;
  query.start_ns = resume_ns_;
  query.end_ns = t.is_infinite() ? t.ns() : t.ns() + 1;  // (now, t] as [resume, t + 1)
  query.topics = options_.topics;
  size_t count = 0;
  int64_t current_ns = resume_ns_;
  uint64_t seen_at_current = 0;  // messages met at current_ns, skipped ones included
  std::exception_ptr failure;
  if (query.start_ns < query.end_ns) {
    Status s = reader_.read_messages(query, [&](const MessageView& m) {
      if (m.log_time_ns != current_ns) {
        current_ns = m.log_time_ns;
        seen_at_current = 0;
      }
      ++seen_at_current;
      if (current_ns == resume_ns_ && seen_at_current <= skip_at_resume_) return true;
      ReplayMessage msg;
      msg.topic = m.channel->topic;
      msg.schema_name = m.schema != nullptr ? std::string_view(m.schema->name) : "";
      msg.message_encoding = m.channel->message_encoding;
      msg.log_time_ns = m.log_time_ns;
      msg.publish_time_ns = m.publish_time_ns;
      msg.sequence = m.sequence;
      msg.data = m.data;
      msg.control = m.channel->topic == options_.control_topic && is_control_payload(m.data_view());
      if (msg.control && !options_.deliver_control) {
        ++control_skipped_;
        return true;
      }
      ++count;
      ++delivered_;
      try {
        // Index loop: a callback may subscribe (appends) or unsubscribe (erases).
        for (size_t i = 0; i < subscribers_.size(); ++i) {
          const Subscriber& sub = subscribers_[i];
          const bool wanted =
              sub.control ? msg.control : sub.topic.empty() || sub.topic == msg.topic;
          if (!wanted) continue;
          ReplayCallback cb = sub.callback;
          cb(msg);
        }
      } catch (...) {
        failure = std::current_exception();
        return false;
      }
      return true;
    });
    if (failure) {
      // The failing message counts as delivered; the rest of its instant comes next time.
      now_ = SimTime::from_ns(current_ns);
      resume_ns_ = current_ns;
      skip_at_resume_ = seen_at_current;
      std::rethrow_exception(failure);
    }
    if (!s.ok()) return s;
  }
  now_ = t;
  resume_ns_ = query.end_ns;
  skip_at_resume_ = 0;
  return count;
}

}  // namespace fieldproof::record
