#include "fieldproof/engine/observer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <optional>

#include "engine/resources.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/json.hpp"
#include "fieldproof/msgs/lifecycle.pb.h"
#include "fieldproof/time/seconds.hpp"

namespace fieldproof::engine {

using assertions::Sample;
using nlohmann::json;

namespace {

double round3(double v) { return std::round(v * 1e3) / 1e3; }

// A topic whose messages are counted (rate), aged (latency) or decoded (value).
struct TopicState {
  std::string vehicle;
  bool value = false;
  std::optional<Duration> rate_window;
  std::optional<Duration> latency_window;
  uint64_t messages = 0;
  std::deque<SimTime> arrivals;                 // rate: receipt times
  std::deque<std::pair<SimTime, double>> ages;  // latency: (receipt, age ms)
  std::deque<SimTime> unstamped;                // latency: receipts without a header stamp
  bool error_reported = false;
};

// The vehicle a /model/<v>/... topic belongs to ("" otherwise).
std::string vehicle_of(const std::string& topic) {
  constexpr std::string_view kPrefix = "/model/";
  if (topic.rfind(kPrefix, 0) != 0) return "";
  const size_t end = topic.find('/', kPrefix.size());
  if (end == std::string::npos) return "";
  return topic.substr(kPrefix.size(), end - kPrefix.size());
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

struct Observer::Impl {
  ObserverOptions o;
  msgs::Decoder decoder;
  ResourceReader reader;
  bool started = false;
  SimTime start_sim = SimTime::zero();
  SimTime next_second = SimTime::zero();
  uint64_t count = 0;
  std::map<std::string, SimTime> next_pose;             // model -> next due (10 Hz grid)
  std::map<std::string, std::string> contact_topics;    // topic -> vehicle
  std::map<std::string, std::string> lifecycle_topics;  // topic -> vehicle
  std::map<std::string, std::map<std::string, std::string>> states;  // vehicle -> node -> state
  std::map<std::string, TopicState> topics;
  std::set<std::string> errors_reported;  // processes
  json last_rates = json::object();       // topic -> hz, the last window
  json last_poses = json::object();       // model -> {x, y, yaw}

  explicit Impl(ObserverOptions opts)
      : o(std::move(opts)),
        reader(
            o.wall_now ? o.wall_now : [] { return SimTime::zero(); }, o.proc_root) {
    if (!o.wall_now) o.wall_now = [] { return SimTime::zero(); };
    for (const auto& m : o.watch.poses) next_pose[m] = SimTime::zero();
    for (const auto& v : o.watch.contacts) contact_topics["/model/" + v + "/contacts"] = v;
    for (const auto& v : o.watch.lifecycle) lifecycle_topics["/model/" + v + "/lifecycle"] = v;
    const auto topic = [&](const std::string& t) -> TopicState& {
      TopicState& s = topics[t];
      s.vehicle = vehicle_of(t);
      return s;
    };
    for (const auto& t : o.watch.values) topic(t).value = true;
    for (const auto& [t, w] : o.watch.rates) {
      TopicState& s = topic(t);
      s.rate_window = s.rate_window ? std::max(*s.rate_window, w) : w;
    }
    for (const auto& [t, w] : o.watch.latencies) {
      TopicState& s = topic(t);
      s.latency_window = s.latency_window ? std::max(*s.latency_window, w) : w;
    }
  }

  double wall_s() const { return round3(to_seconds(o.wall_now() - o.wall0)); }

  void write(const json& j) {
    if (o.write_line) o.write_line(j);
  }

  void emit(const Sample& s) {
    ++count;
    if (o.write_line) {
      json j = s.to_json();
      if (!s.vehicle.empty() && !j.contains("model") && !j.contains("vehicle")) {
        j["vehicle"] = s.vehicle;
      }
      o.write_line(j);
    }
    if (o.on_sample) o.on_sample(s);
  }

  void error(SimTime sim, const std::string& topic, const std::string& what) {
    write({{"kind", "error"}, {"sim", to_seconds(sim)}, {"topic", topic}, {"error", what}});
  }

  void on_poses(const lockstep::Publish& m) {
    const auto poses = msgs::parse<ignition::msgs::Pose_V>(m.payload);
    if (!poses) {
      error(m.stamp, m.topic, "the payload is not a valid ignition.msgs.Pose_V");
      return;
    }
    for (const auto& p : poses->pose()) {
      auto it = next_pose.find(p.name());
      if (it == next_pose.end() || m.stamp < it->second) continue;
      const int64_t period = std::max<int64_t>(o.pose_period.ns(), 1);
      it->second = SimTime::from_ns((m.stamp.ns() / period + 1) * period);
      Sample s;
      s.kind = Sample::Kind::kPose;
      s.sim = m.stamp;
      s.vehicle = p.name();
      s.pose = {p.position().x(), p.position().y(), msgs::yaw_of(p.orientation())};
      last_poses[s.vehicle] = {
          {"x", round3(s.pose.x)}, {"y", round3(s.pose.y)}, {"yaw", round3(s.pose.yaw)}};
      emit(s);
    }
  }

  void on_contacts(const lockstep::Publish& m, const std::string& vehicle) {
    const auto c = msgs::parse<ignition::msgs::Contacts>(m.payload);
    if (!c) {
      error(m.stamp, m.topic, "the payload is not a valid ignition.msgs.Contacts");
      return;
    }
    Sample s;
    s.kind = Sample::Kind::kContact;
    s.sim = m.stamp;
    s.vehicle = vehicle;
    for (const auto& ct : c->contact()) s.contacts.push_back(ct.collision2().name());
    emit(s);
  }

  void on_lifecycle(const lockstep::Publish& m, const std::string& vehicle) {
    const auto l = msgs::parse<fieldproof::msgs::LifecycleState>(m.payload);
    if (!l) {
      error(m.stamp, m.topic, "the payload is not a valid fieldproof.msgs.LifecycleState");
      return;
    }
    const std::string state = lower(fieldproof::msgs::LifecycleState::State_Name(l->state()));
    std::string& last = states[vehicle][l->node()];
    if (last == state) return;
    last = state;
    Sample s;
    s.kind = Sample::Kind::kLifecycle;
    s.sim = m.stamp;
    s.vehicle = vehicle;
    s.node = l->node();
    s.state = state;
    emit(s);
  }

  void on_topic(const lockstep::Publish& m, SimTime received, TopicState& ts) {
    ++ts.messages;
    if (ts.rate_window) ts.arrivals.push_back(received);
    if (!ts.value && !ts.latency_window) return;
    msgs::Decoded d = decoder.decode(m.type, m.payload, ts.value);
    if (!d.ok) {
      if (!ts.error_reported) error(received, m.topic, d.error);
      ts.error_reported = true;
      return;
    }
    if (ts.latency_window) {
      if (d.stamp) {
        ts.ages.emplace_back(received, static_cast<double>((received - *d.stamp).ns()) / 1e6);
      } else {
        ts.unstamped.push_back(received);
      }
    }
    if (ts.value) {
      Sample s;
      s.kind = Sample::Kind::kValue;
      s.sim = received;
      s.vehicle = ts.vehicle;
      s.topic = m.topic;
      s.message = std::move(d.json);
      s.messages = ts.messages;
      emit(s);
    }
  }

  void rate(const std::string& topic, TopicState& ts, SimTime t) {
    const Duration w = *ts.rate_window;
    while (!ts.arrivals.empty() && ts.arrivals.front() <= t - w) ts.arrivals.pop_front();
    if (t - start_sim < w) return;  // only once a full window has passed
    uint64_t n = 0;
    for (const SimTime a : ts.arrivals) n += a <= t;
    Sample s;
    s.kind = Sample::Kind::kRate;
    s.sim = t;
    s.vehicle = ts.vehicle;
    s.topic = topic;
    s.window = w;
    s.messages = n;
    s.hz = static_cast<double>(n) / to_seconds(w);
    last_rates[topic] = round3(s.hz);
    emit(s);
  }

  void latency(const std::string& topic, TopicState& ts, SimTime t) {
    const Duration w = *ts.latency_window;
    while (!ts.ages.empty() && ts.ages.front().first <= t - w) ts.ages.pop_front();
    while (!ts.unstamped.empty() && ts.unstamped.front() <= t - w) ts.unstamped.pop_front();
    std::vector<double> ages;
    for (const auto& [at, age] : ts.ages) {
      if (at <= t) ages.push_back(age);
    }
    uint64_t unstamped = 0;
    for (const SimTime at : ts.unstamped) unstamped += at <= t;
    assertions::LatencyWindow lw;
    lw.unstamped = unstamped;
    if (ages.empty()) {
      // Only messages without a stamp: a window that says so (message_latency fails on it).
      if (unstamped == 0) return;
      Sample s;
      s.kind = Sample::Kind::kLatency;
      s.sim = t;
      s.vehicle = ts.vehicle;
      s.topic = topic;
      s.window = w;
      s.latency = lw;
      emit(s);
      return;
    }
    std::sort(ages.begin(), ages.end());
    lw.count = ages.size();
    double sum = 0;
    for (const double a : ages) sum += a;
    lw.mean_ms = sum / static_cast<double>(ages.size());
    lw.min_ms = ages.front();
    lw.max_ms = ages.back();
    // Nearest rank: the smallest age at or above 95 % of the window's ages.
    const size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(ages.size())));
    lw.p95_ms = ages[std::max<size_t>(rank, 1) - 1];
    Sample s;
    s.kind = Sample::Kind::kLatency;
    s.sim = t;
    s.vehicle = ts.vehicle;
    s.topic = topic;
    s.window = w;
    s.latency = lw;
    emit(s);
  }

  void lifecycle(SimTime t) {
    for (const auto& [topic, vehicle] : lifecycle_topics) {
      (void)topic;
      const auto it = states.find(vehicle);
      Sample s;
      s.kind = Sample::Kind::kLifecycle;
      s.sim = t;
      s.vehicle = vehicle;
      if (it == states.end() || it->second.empty()) {
        s.state = "unavailable";  // no node of the vehicle has reported a state
        emit(s);
        continue;
      }
      for (const auto& [node, state] : it->second) {
        s.node = node;
        s.state = state;
        emit(s);
      }
    }
  }

  // The process measured for a vehicle: its process stack, the engine for an in-process stack
  // (pid 0), -1 when its process has exited or the vehicle is unknown.
  int pid_of(const std::string& vehicle) const {
    const int pid = (o.stack_pid && !vehicle.empty()) ? o.stack_pid(vehicle) : 0;
    if (pid < 0) return -1;
    return pid > 0 ? pid : static_cast<int>(getpid());
  }

  void resources(SimTime t) {
    std::map<int, ProcessUsage> read;  // one reading per process and second
    for (const auto& vehicle : o.watch.resources) {
      const int pid = pid_of(vehicle);
      if (pid < 0) {
        const std::string process = vehicle + "_nav";
        if (errors_reported.insert(process).second) {
          write({{"kind", "error"},
                 {"sim", to_seconds(t)},
                 {"process", process},
                 {"error", "the stack's process is not running"}});
        }
        continue;
      }
      const bool own = pid == static_cast<int>(getpid());
      auto it = read.find(pid);
      if (it == read.end()) it = read.emplace(pid, reader.sample(pid)).first;
      const ProcessUsage& u = it->second;
      const std::string process = own ? "engine" : vehicle + "_nav";
      if (!u.ok) {
        if (errors_reported.insert(process).second) {
          write({{"kind", "error"},
                 {"sim", to_seconds(t)},
                 {"process", process},
                 {"error", u.error}});
        }
        continue;
      }
      if (u.baseline) continue;  // CPU is known from the second reading on
      Sample s;
      s.kind = Sample::Kind::kResources;
      s.sim = t;
      s.vehicle = vehicle;
      s.process = process;
      // The figures as recorded (three decimals), so a re-judged run reads what this one judged.
      s.cpu_pct = round3(u.cpu_pct);
      s.memory_mb = round3(u.memory_mb);
      emit(s);
      if (o.on_resources) {
        o.on_resources({{"process", process},
                        {"vehicle", vehicle},
                        {"role", own ? "engine" : "stack"},
                        {"pid", pid},
                        {"cpu_pct", round3(u.cpu_pct)},
                        {"memory_mb", round3(u.memory_mb)},
                        {"sim", to_seconds(t)},
                        {"wall", wall_s()}});
      }
    }
  }

  void second(SimTime t) {
    for (auto& [topic, ts] : topics) {
      if (ts.rate_window) rate(topic, ts, t);
      if (ts.latency_window) latency(topic, ts, t);
    }
    lifecycle(t);
    resources(t);
  }
};

Observer::Observer(ObserverOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Observer::~Observer() = default;

std::vector<std::string> Observer::topics() const {
  std::set<std::string> out;
  if (!impl_->next_pose.empty() && !impl_->o.pose_topic.empty()) out.insert(impl_->o.pose_topic);
  for (const auto& [t, v] : impl_->contact_topics) out.insert(t);
  for (const auto& [t, v] : impl_->lifecycle_topics) out.insert(t);
  for (const auto& [t, s] : impl_->topics) out.insert(t);
  return {out.begin(), out.end()};
}

void Observer::start(SimTime now) {
  Impl& d = *impl_;
  d.started = true;
  d.start_sim = now;
  d.next_second = now + seconds(1);
  std::set<int> pids;
  for (const auto& v : d.o.watch.resources) pids.insert(d.pid_of(v));
  for (const int pid : pids) (void)d.reader.sample(pid);  // the CPU baseline
  json topics = json::array();
  for (const auto& t : this->topics()) topics.push_back(t);
  d.write({{"kind", "subscribed"}, {"sim", to_seconds(now)}, {"topics", topics}});
}

void Observer::on_message(const lockstep::Publish& m) { on_message(m, m.stamp); }

void Observer::on_message(const lockstep::Publish& m, SimTime received) {
  Impl& d = *impl_;
  if (m.topic == d.o.pose_topic && !d.next_pose.empty()) d.on_poses(m);
  if (auto it = d.contact_topics.find(m.topic); it != d.contact_topics.end()) {
    d.on_contacts(m, it->second);
  }
  if (auto it = d.lifecycle_topics.find(m.topic); it != d.lifecycle_topics.end()) {
    d.on_lifecycle(m, it->second);
  }
  if (auto it = d.topics.find(m.topic); it != d.topics.end()) d.on_topic(m, received, it->second);
}

void Observer::on_tick(SimTime now) {
  Impl& d = *impl_;
  if (!d.started) return;
  while (d.next_second <= now) {
    d.second(d.next_second);
    d.next_second = d.next_second + seconds(1);
  }
}

void Observer::emit(const Sample& sample) { impl_->emit(sample); }

json Observer::metrics() const {
  json lifecycle = json::object();
  for (const auto& [vehicle, nodes] : impl_->states) {
    for (const auto& [node, state] : nodes) lifecycle[vehicle + "/" + node] = state;
  }
  return {{"rates_hz", impl_->last_rates}, {"poses", impl_->last_poses}, {"lifecycle", lifecycle}};
}

uint64_t Observer::sample_count() const { return impl_->count; }

bool Observer::watching() const { return !topics().empty() || !impl_->o.watch.resources.empty(); }

}  // namespace fieldproof::engine
