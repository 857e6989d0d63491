#include "fieldproof/time/bus.hpp"
#include "fieldproof/util/mutex.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "time/dary_heap.hpp"

namespace fieldproof {
namespace {

struct Sub {
  uint64_t id = 0;
  BusCallback callback;
  bool active = true;
};

struct TopicEntry {
  std::string name;
  std::vector<Sub*> subs;  // in subscription order (increasing id)
};

struct QueuedKey {
  int64_t stamp;
  uint64_t sequence;
  uint32_t slot;
};
struct QueuedLess {
  bool operator()(const QueuedKey& a, const QueuedKey& b) const {
    return a.stamp < b.stamp || (a.stamp == b.stamp && a.sequence < b.sequence);
  }
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A queued message, stored where it is delivered from: subscribers get a reference to `msg`
// itself, so a payload is moved once (into the queue) and never copied.
struct Queued {
  BusMessage msg;
  TopicEntry* topic = nullptr;
};

std::string stamp_text(SimTime t) { return format_seconds(t) + " s"; }

}  // namespace

struct Subscription::Link {
  Bus::Impl* impl = nullptr;
};

struct Bus::Impl {
  // Guarded by mutex: the queue, the interned names, the floor.
  mutable Mutex mutex;
  // The queue: messages usually arrive in (stamp, sequence) order, so they go to `run` (a sorted
  // vector read from `run_head`, O(1) both ways); one published out of order goes to `heap`.
  // The next message is the smaller of the two fronts.
  std::vector<QueuedKey> run FIELDPROOF_GUARDED_BY(mutex);
  size_t run_head FIELDPROOF_GUARDED_BY(mutex) = 0;
  detail::DaryHeap<QueuedKey, QueuedLess> heap FIELDPROOF_GUARDED_BY(mutex);
  // Message storage in fixed chunks, so a Queued keeps its address while being delivered even if
  // publishers add chunks meanwhile.
  static constexpr uint32_t kChunkBits = 8;
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;
  std::vector<std::unique_ptr<Queued[]>> chunks FIELDPROOF_GUARDED_BY(mutex);
  uint32_t slot_count FIELDPROOF_GUARDED_BY(mutex) = 0;
  std::vector<uint32_t> free_slots FIELDPROOF_GUARDED_BY(mutex);
  // Slots of the last batch, freed at the next lock: written by the delivering thread alone
  // (one delivery at a time), outside the lock while callbacks run, so not guarded by it.
  std::vector<uint32_t> delivered;
  std::unordered_map<std::string, std::unique_ptr<TopicEntry>, StringHash, std::equal_to<>> topics;
  std::unordered_set<std::string, StringHash, std::equal_to<>> types;
  // Recently used topics, checked before hashing (publishers reuse a handful of topics).
  static constexpr size_t kTopicCache = 8;
  TopicEntry* topic_cache[kTopicCache] = {};
  size_t topic_cache_next = 0;
  int64_t floor = 0;

  // deliver_until's batch of same-stamp messages: slot and address, taken under the lock.
  static constexpr size_t kBatch = 64;
  struct Taken {
    uint32_t slot;
    Queued* queued;
  };
  std::vector<Taken> batch;

  Queued& slot_locked(uint32_t i) FIELDPROOF_REQUIRES(mutex) {
    return chunks[i >> kChunkBits][i & (kChunkSize - 1)];
  }
  uint32_t allocate_locked() FIELDPROOF_REQUIRES(mutex) {
    if (!free_slots.empty()) {
      const uint32_t i = free_slots.back();
      free_slots.pop_back();
      return i;
    }
    if ((slot_count & (kChunkSize - 1)) == 0)
      chunks.push_back(std::make_unique<Queued[]>(kChunkSize));
    return slot_count++;
  }

  bool queue_empty() const FIELDPROOF_REQUIRES(mutex) {
    return run_head == run.size() && heap.empty();
  }
  size_t queue_size() const FIELDPROOF_REQUIRES(mutex) {
    return run.size() - run_head + heap.size();
  }
  // The smallest queued key; the queue must not be empty.
  const QueuedKey& queue_top() const FIELDPROOF_REQUIRES(mutex) {
    if (run_head == run.size()) return heap.top();
    if (heap.empty()) return run[run_head];
    return QueuedLess{}(heap.top(), run[run_head]) ? heap.top() : run[run_head];
  }
  void queue_push(const QueuedKey& k) FIELDPROOF_REQUIRES(mutex) {
    if (run_head == run.size() || !QueuedLess{}(k, run.back())) {
      run.push_back(k);
    } else {
      heap.push(k);
    }
  }
  QueuedKey queue_pop() FIELDPROOF_REQUIRES(mutex) {
    QueuedKey k;
    if (run_head != run.size() && (heap.empty() || !QueuedLess{}(heap.top(), run[run_head]))) {
      k = run[run_head++];
      if (run_head == run.size()) {
        run.clear();
        run_head = 0;
      }
    } else {
      k = heap.top();
      heap.pop();
    }
    return k;
  }

  // Delivering thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Sub>> subs;
  std::vector<Sub*> wildcard;
  std::vector<uint64_t> doomed;  // unsubscribed during a delivery: removed afterwards
  uint64_t next_sub_id = 1;
  bool delivering = false;
  std::shared_ptr<Subscription::Link> link = std::make_shared<Subscription::Link>();

  TopicEntry* intern_topic_locked(std::string_view name) {
    for (TopicEntry* t : topic_cache) {
      // Topics often share a prefix and differ at the end: compare the size and last byte first.
      if (t != nullptr && t->name.size() == name.size() && !name.empty() &&
          t->name.back() == name.back() && t->name == name) {
        return t;
      }
    }
    TopicEntry* p = nullptr;
    auto it = topics.find(name);
    if (it != topics.end()) {
      p = it->second.get();
    } else {
      auto entry = std::make_unique<TopicEntry>();
      entry->name = std::string(name);
      p = entry.get();
      topics.emplace(entry->name, std::move(entry));
    }
    topic_cache[topic_cache_next] = p;
    topic_cache_next = (topic_cache_next + 1) % kTopicCache;
    return p;
  }

  static void erase_sub(std::vector<Sub*>& v, uint64_t id) {
    v.erase(std::remove_if(v.begin(), v.end(), [id](Sub* s) { return s->id == id; }), v.end());
  }

  void remove_now(uint64_t id) {
    auto it = subs.find(id);
    if (it == subs.end()) return;
    erase_sub(wildcard, id);
    {
      MutexLock lock(mutex);
      for (auto& [name, t] : topics) erase_sub(t->subs, id);
    }
    subs.erase(it);
  }

  void unsubscribe(uint64_t id) {
    auto it = subs.find(id);
    if (it == subs.end() || !it->second->active) return;
    it->second->active = false;
    if (delivering) {
      doomed.push_back(id);
    } else {
      remove_now(id);
    }
  }

  bool is_active(uint64_t id) const {
    auto it = subs.find(id);
    return it != subs.end() && it->second->active;
  }
};

// ---- Subscription ----

Subscription::Subscription(Subscription&& other) noexcept
    : link_(std::move(other.link_)), id_(other.id_) {
  other.id_ = 0;
}

Subscription& Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    unsubscribe();
    link_ = std::move(other.link_);
    id_ = other.id_;
    other.id_ = 0;
  }
  return *this;
}

Subscription::~Subscription() { unsubscribe(); }

void Subscription::unsubscribe() {
  if (link_ && link_->impl != nullptr && id_ != 0) link_->impl->unsubscribe(id_);
  link_.reset();
  id_ = 0;
}

bool Subscription::active() const {
  return link_ && link_->impl != nullptr && id_ != 0 && link_->impl->is_active(id_);
}

void Subscription::release() {
  link_.reset();
  id_ = 0;
}

// ---- Bus ----

Bus::Bus() : impl_(std::make_unique<Impl>()) { impl_->link->impl = impl_.get(); }

Bus::~Bus() { impl_->link->impl = nullptr; }

uint64_t Bus::publish(std::string_view topic, SimTime stamp, std::string payload,
                      std::string_view type) {
  if (stamp.is_infinite()) {
    throw TimeError("Bus::publish on \"" + std::string(topic) + "\": the stamp is infinite");
  }
  MutexLock lock(impl_->mutex);
  if (stamp.ns() < impl_->floor) {
    throw TimeError("Bus::publish on \"" + std::string(topic) + "\": stamp " + stamp_text(stamp) +
                    " is before the last delivered stamp " +
                    stamp_text(SimTime::from_ns(impl_->floor)) + " (time goes forward)");
  }
  // Taken under the lock so that sequence order and queue order agree across threads.
  const uint64_t sequence = next_sequence_.fetch_add(1, std::memory_order_relaxed);
  const uint32_t slot = impl_->allocate_locked();
  Queued& q = impl_->slot_locked(slot);
  q.topic = impl_->intern_topic_locked(topic);
  q.msg.topic = q.topic->name;
  q.msg.stamp = stamp;
  q.msg.sequence = sequence;
  q.msg.payload = std::move(payload);
  q.msg.type = type.empty() ? std::string_view() : *impl_->types.emplace(type).first;
  impl_->queue_push(QueuedKey{stamp.ns(), sequence, slot});
  return sequence;
}

Subscription Bus::subscribe(std::string_view topic, BusCallback callback) {
  if (!callback) {
    throw TimeError("Bus::subscribe to \"" + std::string(topic) + "\": the callback is empty");
  }
  auto sub = std::make_unique<Sub>();
  sub->id = impl_->next_sub_id++;
  sub->callback = std::move(callback);
  Sub* p = sub.get();
  impl_->subs.emplace(p->id, std::move(sub));
  if (topic.empty() || topic == "*") {
    impl_->wildcard.push_back(p);
  } else {
    MutexLock lock(impl_->mutex);
    impl_->intern_topic_locked(topic)->subs.push_back(p);
  }
  return Subscription(impl_->link, p->id);
}

size_t Bus::deliver_until(SimTime t) {
  Impl& im = *impl_;
  if (im.delivering) throw TimeError("Bus::deliver_until called from inside a delivery");
  im.delivering = true;
  struct Reset {
    Impl& im;
    ~Reset() {
      im.delivering = false;
      for (uint64_t id : im.doomed) im.remove_now(id);
      im.doomed.clear();
    }
  } reset{im};

  size_t deliveries = 0;
  for (;;) {
    // Take every message of the next stamp (up to kBatch) under one lock. Anything published
    // meanwhile has a larger sequence and a stamp >= this one, so it sorts after the whole batch:
    // the batch never needs to be merged with later publications.
    size_t count = 0;
    {
      MutexLock lock(im.mutex);
      for (uint32_t d : im.delivered) im.free_slots.push_back(d);
      im.delivered.clear();
      if (im.queue_empty() || im.queue_top().stamp > t.ns()) break;
      const int64_t stamp = im.queue_top().stamp;
      while (count < Impl::kBatch && !im.queue_empty() && im.queue_top().stamp == stamp) {
        const QueuedKey key = im.queue_pop();
        if (im.batch.size() <= count) im.batch.emplace_back();
        im.batch[count++] = Impl::Taken{key.slot, &im.slot_locked(key.slot)};
      }
      im.floor = stamp;
    }
    size_t k = 0;
    try {
      for (; k < count; ++k) {
        const Queued& q = *im.batch[k].queued;
        const TopicEntry* topic = q.topic;
        // Subscribers added from here on get the next messages, not this one; removal is
        // deferred while delivering, so indices stay valid.
        const size_t n_topic = topic->subs.size();
        const size_t n_wild = im.wildcard.size();
        size_t i = 0;
        size_t j = 0;
        while (i < n_topic || j < n_wild) {
          Sub* s = nullptr;
          if (j >= n_wild || (i < n_topic && topic->subs[i]->id < im.wildcard[j]->id)) {
            s = topic->subs[i++];
          } else {
            s = im.wildcard[j++];
          }
          if (!s->active) continue;
          ++deliveries;
          s->callback(q.msg);
        }
        im.delivered.push_back(im.batch[k].slot);
      }
    } catch (...) {
      // A callback threw: that message counts as delivered, the rest of the batch goes back to
      // the queue, undelivered (their slots still hold them).
      MutexLock lock(im.mutex);
      im.free_slots.push_back(im.batch[k].slot);
      for (size_t r = k + 1; r < count; ++r) {
        const Queued& q = *im.batch[r].queued;
        im.queue_push(QueuedKey{q.msg.stamp.ns(), q.msg.sequence, im.batch[r].slot});
      }
      throw;
    }
  }
  return deliveries;
}

std::optional<SimTime> Bus::next_stamp() const {
  MutexLock lock(impl_->mutex);
  if (impl_->queue_empty()) return std::nullopt;
  return SimTime::from_ns(impl_->queue_top().stamp);
}

size_t Bus::pending() const {
  MutexLock lock(impl_->mutex);
  return impl_->queue_size();
}

SimTime Bus::last_delivered() const {
  MutexLock lock(impl_->mutex);
  return SimTime::from_ns(impl_->floor);
}

void Bus::advance_floor(SimTime t) {
  MutexLock lock(impl_->mutex);
  impl_->floor = std::max(impl_->floor, t.ns());
}

}  // namespace fieldproof
