#include "fieldproof/time/bus.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
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

struct Queued {
  TopicEntry* topic = nullptr;
  std::string payload;
  std::string_view type;
};

std::string stamp_text(SimTime t) { return format_seconds(t) + " s"; }

}  // namespace

struct Subscription::Link {
  Bus::Impl* impl = nullptr;
};

struct Bus::Impl {
  // Guarded by mutex: the queue, the interned names, the floor.
  mutable std::mutex mutex;
  detail::DaryHeap<QueuedKey, QueuedLess> queue;
  std::vector<Queued> slots;
  std::vector<uint32_t> free_slots;
  std::unordered_map<std::string, std::unique_ptr<TopicEntry>> topics;
  std::unordered_set<std::string> types;
  int64_t floor = 0;

  // Delivering thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Sub>> subs;
  std::vector<Sub*> wildcard;
  std::vector<uint64_t> doomed;  // unsubscribed during a delivery: removed afterwards
  uint64_t next_sub_id = 1;
  bool delivering = false;
  std::shared_ptr<Subscription::Link> link = std::make_shared<Subscription::Link>();

  TopicEntry* intern_topic_locked(std::string_view name) {
    auto it = topics.find(std::string(name));
    if (it != topics.end()) return it->second.get();
    auto entry = std::make_unique<TopicEntry>();
    entry->name = std::string(name);
    TopicEntry* p = entry.get();
    topics.emplace(entry->name, std::move(entry));
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
      std::lock_guard<std::mutex> lock(mutex);
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
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (stamp.ns() < impl_->floor) {
    throw TimeError("Bus::publish on \"" + std::string(topic) + "\": stamp " + stamp_text(stamp) +
                    " is before the last delivered stamp " +
                    stamp_text(SimTime::from_ns(impl_->floor)) + " (time goes forward)");
  }
  // Taken under the lock so that sequence order and queue order agree across threads.
  const uint64_t sequence = next_sequence_.fetch_add(1, std::memory_order_relaxed);
  uint32_t slot = 0;
  if (!impl_->free_slots.empty()) {
    slot = impl_->free_slots.back();
    impl_->free_slots.pop_back();
  } else {
    slot = static_cast<uint32_t>(impl_->slots.size());
    impl_->slots.emplace_back();
  }
  Queued& q = impl_->slots[slot];
  q.topic = impl_->intern_topic_locked(topic);
  q.payload = std::move(payload);
  q.type = type.empty() ? std::string_view() : *impl_->types.emplace(type).first;
  impl_->queue.push(QueuedKey{stamp.ns(), sequence, slot});
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
    std::lock_guard<std::mutex> lock(impl_->mutex);
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
  BusMessage msg;
  for (;;) {
    TopicEntry* topic = nullptr;
    {
      std::lock_guard<std::mutex> lock(im.mutex);
      if (im.queue.empty() || im.queue.top().stamp > t.ns()) break;
      const QueuedKey key = im.queue.top();
      im.queue.pop();
      Queued& q = im.slots[key.slot];
      topic = q.topic;
      msg.topic = topic->name;
      msg.stamp = SimTime::from_ns(key.stamp);
      msg.sequence = key.sequence;
      msg.payload.swap(q.payload);  // the slot keeps msg's old buffer for reuse
      msg.type = q.type;
      im.free_slots.push_back(key.slot);
      im.floor = key.stamp;
    }
    // Subscribers added from here on get the next messages, not this one; removal is deferred
    // while delivering, so indices stay valid.
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
      s->callback(msg);
    }
  }
  return deliveries;
}

std::optional<SimTime> Bus::next_stamp() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->queue.empty()) return std::nullopt;
  return SimTime::from_ns(impl_->queue.top().stamp);
}

size_t Bus::pending() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->queue.size();
}

SimTime Bus::last_delivered() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return SimTime::from_ns(impl_->floor);
}

void Bus::advance_floor(SimTime t) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->floor = std::max(impl_->floor, t.ns());
}

}  // namespace fieldproof
