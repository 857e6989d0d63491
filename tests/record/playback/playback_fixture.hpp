// What the playback tests share: a recording written from a list of messages, and a ZeroMQ
// coordinator served by the test whose tap records every delivered message.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/record/mcap_writer.hpp"

namespace fieldproof::record::playback_testing {

namespace fs = std::filesystem;

// This test process's own folder for recordings and ipc endpoints.
inline fs::path temp_dir() {
  auto dir = fs::temp_directory_path() / ("fieldproof_play_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

struct Msg {
  std::string topic;
  int64_t log_ns;
  std::string payload;
};

// A recording of `msgs`, each channel typed like the recorder does ("type" metadata).
inline std::string write_recording(const std::string& name, const std::vector<Msg>& msgs) {
  const auto path = temp_dir() / name;
  McapWriterOptions o;
  o.compression = Compression::kNone;
  McapWriter w(o);
  EXPECT_TRUE(w.open(path.string()).ok());
  std::map<std::string, uint16_t> channels;
  uint32_t seq = 0;
  for (const Msg& m : msgs) {
    if (!channels.count(m.topic)) {
      channels[m.topic] = *w.add_channel(m.topic, "json", 0, {{"type", "test.Text"}});
    }
    EXPECT_TRUE(w.write(channels[m.topic], seq++, SimTime::from_ns(m.log_ns),
                        SimTime::from_ns(m.log_ns), m.payload)
                    .ok());
  }
  EXPECT_TRUE(w.close().ok());
  return path.string();
}

// A coordinator on an ipc endpoint of this test; the tap records every delivered message.
class Coordinator {
 public:
  explicit Coordinator(const std::string& name) {
    lockstep::ServerOptions o;
    o.bind = {"ipc://" + (temp_dir() / (name + ".ipc")).string()};
    o.tap = [this](const lockstep::Publish& m) {
      std::lock_guard lock(mutex_);
      tapped_.push_back(m);
      cv_.notify_all();
    };
    o.on_grant = [this](SimTime t, uint64_t) {
      std::lock_guard lock(mutex_);
      max_grant_ = std::max(max_grant_, t);
      cv_.notify_all();
    };
    o.on_announce = [this](const lockstep::Announce& a) {
      std::lock_guard lock(mutex_);
      announced_.insert(a.participant);
      cv_.notify_all();
    };
    server_ = std::make_unique<lockstep::CoordinatorServer>(std::move(o));
  }
  std::string endpoint() const { return server_->endpoints().front(); }
  std::vector<lockstep::Publish> tapped() {
    std::lock_guard lock(mutex_);
    return tapped_;
  }
  std::vector<lockstep::Publish> tapped(const std::string& topic) {
    std::vector<lockstep::Publish> out;
    for (auto& m : tapped()) {
      if (m.topic == topic) out.push_back(m);
    }
    return out;
  }
  // True once `n` messages on `topic` were delivered (false after 10 s).
  bool await_count(const std::string& topic, size_t n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      size_t c = 0;
      for (const auto& m : tapped_) c += m.topic == topic;
      return c >= n;
    });
  }
  SimTime max_grant() {
    std::lock_guard lock(mutex_);
    return max_grant_;
  }
  // True once the coordinator's time passed `t` (false after 10 s).
  bool await_grant_past(SimTime t) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return max_grant_ > t; });
  }
  bool await_participant(const std::string& name) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return announced_.count(name); });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<lockstep::Publish> tapped_;
  std::set<std::string> announced_;
  SimTime max_grant_ = SimTime::zero();
  std::unique_ptr<lockstep::CoordinatorServer> server_;
};

}  // namespace fieldproof::record::playback_testing
