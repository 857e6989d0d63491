// Player: an MCAP recording paced by a TimeControllerClock (see player.hpp).
#include "fieldproof/record/player.hpp"
#include "fieldproof/util/mutex.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

namespace fieldproof::record {
namespace {

// How long run() waits at most before re-checking stop() (steady time). stop() also wakes the
// sleeper at once; this only covers a stop() that lands just before the wait begins.
constexpr Duration kStopPoll = Duration::from_ns(100'000'000);

std::string seconds_text(Duration d) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(d.ns()) / 1e9);
  return buf;
}

}  // namespace

Player::Player(PlayerOptions options, SteadyTime& steady)
    : options_(std::move(options)), steady_(steady) {}

Player::~Player() {
  stop();
  if (options_.follow != nullptr && follow_handler_ != 0) {
    (void)options_.follow->remove_jump_handler(follow_handler_);
  }
}

Result<std::unique_ptr<Player>> Player::open(const std::string& path, PlayerOptions options,
                                             SteadyTime& steady) {
  McapReader reader;
  std::unique_ptr<Player> player(new Player(std::move(options), steady));
  if (Status s = reader.open(path); !s.ok()) return s;
  return load(std::move(player), reader);
}

Result<std::unique_ptr<Player>> Player::open_bytes(std::string bytes, PlayerOptions options,
                                                   SteadyTime& steady) {
  McapReader reader;
  std::unique_ptr<Player> player(new Player(std::move(options), steady));
  if (Status s = reader.open_bytes(std::move(bytes)); !s.ok()) return s;
  return load(std::move(player), reader);
}

Result<std::unique_ptr<Player>> Player::load(std::unique_ptr<Player> p, McapReader& reader) {
  const PlayerOptions& o = p->options_;
  if (!(o.rate > 0.0) || !std::isfinite(o.rate)) {
    return Status(StatusCode::kInvalidArgument,
                  "rate " + std::to_string(o.rate) + " refused: must be a finite number > 0");
  }
  if (o.start_offset < Duration::zero() ||
      (o.playback_duration && *o.playback_duration < Duration::zero()) ||
      (o.playback_until && *o.playback_until < Duration::zero())) {
    return Status(StatusCode::kInvalidArgument,
                  "start offset, playback duration and playback until must be >= 0");
  }
  if (o.follow != nullptr && o.loop) {
    return Status(StatusCode::kInvalidArgument,
                  "loop refused while following a clock (the followed source controls time)");
  }
  std::string have;
  for (const auto& [id, channel] : reader.channels()) {
    have += (have.empty() ? "" : ", ") + channel.topic;
    if (p->topics_by_channel_.size() <= id) {
      p->topics_by_channel_.resize(id + 1u);
      p->types_by_channel_.resize(id + 1u);
    }
    p->topics_by_channel_[id] = channel.topic;
    std::string type;
    if (auto it = channel.metadata.find("type"); it != channel.metadata.end()) type = it->second;
    if (type.empty()) {
      if (auto it = reader.schemas().find(channel.schema_id); it != reader.schemas().end()) {
        type = it->second.name;
      }
    }
    p->types_by_channel_[id] = type;
  }
  for (const std::string& topic : o.topics) {
    const bool known = std::any_of(reader.channels().begin(), reader.channels().end(),
                                   [&](const auto& c) { return c.second.topic == topic; });
    if (!known) {
      return Status(StatusCode::kInvalidArgument,
                    "unknown topic '" + topic + "' (the recording has: " +
                        (have.empty() ? std::string("no topics") : have) + ")");
    }
  }
  const Statistics& stats = reader.statistics();
  const SimTime first = SimTime::from_ns(stats.message_start_time_ns);
  const SimTime last = SimTime::from_ns(stats.message_end_time_ns);
  SimTime start = first + o.start_offset;
  if (stats.message_count > 0 && start > last) {
    p->notices_.push_back("start offset " + seconds_text(o.start_offset) +
                          " is past the end of the recording (" + seconds_text(last - first) +
                          " long); clamped to its last message");
    start = last;
  }
  SimTime stop = last;
  if (o.playback_duration) stop = std::min(stop, start + *o.playback_duration);
  if (o.playback_until) stop = std::min(stop, first + *o.playback_until);
  if (stop < start) stop = start;
  p->range_start_ = stats.message_count > 0 ? start : SimTime::zero();
  p->range_end_ = stats.message_count > 0 ? stop : SimTime::zero();

  ReadMessageOptions q;
  q.start_ns = start.ns();
  q.end_ns = stop.ns() == std::numeric_limits<int64_t>::max() ? stop.ns() : stop.ns() + 1;
  q.topics = o.topics;
  if (stats.message_count > 0) {
    const Status s = reader.read_messages(q, [&](const MessageView& m) {
      p->items_.push_back({m.channel->id, m.sequence, m.log_time_ns, std::string(m.data_view())});
      return true;
    });
    if (!s.ok()) return s;
  }
  for (const McapProblem& problem : reader.problems()) {
    p->problems_.push_back("at offset " + std::to_string(problem.offset) + ": " + problem.message);
  }
  p->clock_ = std::make_unique<TimeControllerClock>(
      TimeControllerClockOptions{
          .start = p->range_start_, .rate = o.rate, .start_paused = o.start_paused},
      p->steady_);
  p->pacing_ = p->clock_.get();
  if (o.follow != nullptr) {
    p->pacing_ = o.follow;
    Player* raw = p.get();
    // A backward sample of the followed source: the position moves like a seek.
    p->follow_handler_ = o.follow->add_jump_handler({}, [raw](const ClockJump& j) {
      MutexLock lock(raw->mutex_);
      raw->next_ = raw->first_at_or_after(j.to);
      ++raw->generation_;
    });
  }
  Result<std::unique_ptr<Player>> out(std::move(p));
  return out;
}

void Player::publish_locked(size_t index) {
  const Item& item = items_[index];
  ++played_;
  if (sink_ == nullptr || !*sink_) return;
  PlayedMessage m;
  m.topic = item.channel_id < topics_by_channel_.size()
                ? std::string_view(topics_by_channel_[item.channel_id])
                : std::string_view();
  m.channel_id = item.channel_id;
  m.sequence = item.sequence;
  m.log_time_ns = item.log_time_ns;
  m.data = item.data;
  m.index = index;
  if (item.channel_id < types_by_channel_.size()) m.type = types_by_channel_[item.channel_id];
  if (index + 1 < items_.size()) {
    m.next_log_time_ns = items_[index + 1].log_time_ns;
  } else if (options_.loop) {
    m.next_log_time_ns = items_.front().log_time_ns;
  }
  (*sink_)(m);
}

uint64_t Player::run(const MessageSink& sink) {
  MutexLock lock(mutex_);
  sink_ = &sink;
  finished_ = false;
  running_.store(true);
  const uint64_t before = played_;
  while (!stop_.load()) {
    if (next_ >= items_.size()) {
      if (options_.loop && !items_.empty()) {
        next_ = 0;
        ++generation_;
        ++loops_;
        (void)clock_->jump(range_start_);
        continue;
      }
      break;
    }
    const size_t index = next_;
    const uint64_t generation = generation_;
    const SimTime due = SimTime::from_ns(items_[index].log_time_ns);
    // seek() and stop() jump the clock with mutex_ held: a jump after this read ends the wait.
    const uint64_t jumps = clock_->jump_count();
    lock.unlock();
    // A followed clock cannot be woken by stop(): its wait is bounded by kStopPoll instead.
    const bool reached = following() ? pacing_->sleep_until(due, kStopPoll)
                                     : clock_->sleep_until(due, kStopPoll, jumps);
    lock.lock();
    if (!reached || generation != generation_ || stop_.load()) continue;
    publish_locked(index);
    next_ = index + 1;
  }
  finished_ = next_ >= items_.size();
  sink_ = nullptr;
  running_.store(false);
  return played_ - before;
}

void Player::stop() {
  {
    MutexLock lock(mutex_);
    stop_.store(true);
  }
  // A jump to now wakes a sleeping run() (paused or not) without moving time: run() reads the
  // clock's jump count under mutex_ before it waits, so this jump (made after stop_ was set
  // under mutex_) is never missed. run() ends as soon as it checks stop_.
  if (!clock_) return;
  (void)clock_->jump(clock_->now());
  while (running_.load()) std::this_thread::yield();
}

Status Player::pause() { return pacing_->set_paused(true); }
Status Player::resume() { return pacing_->set_paused(false); }
Status Player::toggle() { return pacing_->set_paused(!pacing_->is_paused()); }
Status Player::set_rate(double rate) { return pacing_->set_rate(rate); }

size_t Player::first_at_or_after(SimTime t) const {
  return static_cast<size_t>(
      std::lower_bound(items_.begin(), items_.end(), t.ns(),
                       [](const Item& item, int64_t v) { return item.log_time_ns < v; }) -
      items_.begin());
}

SeekResult Player::seek(SimTime to) {
  SeekResult r;
  r.requested = to;
  if (following()) {
    r.to = pacing_->now();
    r.refused = true;
    r.message = "seek refused: this player follows another clock (seek the source instead)";
    return r;
  }
  r.to = std::clamp(to, range_start_, range_end_);
  if (r.to != to) {
    r.clamped = true;
    r.message = "seek to " + seconds_text(to - range_start_) +
                " (from the start of playback) is outside the recording (0 to " +
                seconds_text(range_end_ - range_start_) + "); clamped to " +
                seconds_text(r.to - range_start_);
  }
  MutexLock lock(mutex_);
  next_ = first_at_or_after(r.to);
  ++generation_;
  (void)clock_->jump(r.to);
  return r;
}

SeekResult Player::seek_by(Duration d) { return seek(pacing_->now() + d); }

Status Player::play_next_locked() {
  if (following()) {
    return Status(StatusCode::kFailedPrecondition,
                  "play_next refused: this player follows another clock");
  }
  if (!clock_->is_paused())
    return Status(StatusCode::kFailedPrecondition, "play_next: only while paused");
  if (sink_ == nullptr)
    return Status(StatusCode::kFailedPrecondition, "play_next: the player is not running");
  if (next_ >= items_.size())
    return Status(StatusCode::kFailedPrecondition, "play_next: at the end of the range");
  const SimTime stamp = SimTime::from_ns(items_[next_].log_time_ns);
  // The paused clock moves to the message's stamp; a message already overdue (the clock passed
  // it just before the pause) plays without moving the clock back.
  if (stamp >= clock_->now()) {
    if (Status s = clock_->play_next(stamp); !s.ok()) return s;
  }
  publish_locked(next_);
  ++next_;
  ++generation_;
  return Status();
}

Status Player::play_next() {
  MutexLock lock(mutex_);
  return play_next_locked();
}

Status Player::burst(uint64_t n, uint64_t* played) {
  MutexLock lock(mutex_);
  uint64_t count = 0;
  Status status = Status();
  for (; count < n; ++count) {
    status = play_next_locked();
    if (!status.ok()) break;
  }
  if (played != nullptr) *played = count;
  if (count > 0) return Status();
  return status;
}

PlayerStatus Player::status() const {
  MutexLock lock(mutex_);
  PlayerStatus s;
  s.now = pacing_->now();
  s.paused = pacing_->is_paused();
  s.rate = pacing_->rate();
  s.played = played_;
  s.position = next_;
  s.total = items_.size();
  s.range_start = range_start_;
  s.range_end = range_end_;
  s.loops = loops_;
  s.finished = finished_;
  return s;
}

}  // namespace fieldproof::record
