#include "fieldproof/stacks/lifecycle.hpp"

#include <algorithm>
#include <cstdio>

namespace fieldproof::stacks {

std::string_view to_string(LifecycleState state) {
  switch (state) {
    case LifecycleState::kUnconfigured:
      return "unconfigured";
    case LifecycleState::kInactive:
      return "inactive";
    case LifecycleState::kActive:
      return "active";
    case LifecycleState::kFinalized:
      return "finalized";
  }
  return "unknown";
}

std::string_view to_string(GoalStatus status) {
  switch (status) {
    case GoalStatus::kAccepted:
      return "accepted";
    case GoalStatus::kRejected:
      return "rejected";
    case GoalStatus::kSucceeded:
      return "succeeded";
    case GoalStatus::kAborted:
      return "aborted";
    case GoalStatus::kCanceled:
      return "canceled";
  }
  return "unknown";
}

Status LifecycleOptions::validate() const {
  if (heartbeat_timeout <= Duration::zero())
    return Status(StatusCode::kInvalidArgument, "lifecycle.heartbeat_timeout must be > 0");
  for (const auto& s : servers) {
    if (s.empty())
      return Status(StatusCode::kInvalidArgument, "lifecycle.servers: a server name is empty");
  }
  return {};
}

LifecycleManager::LifecycleManager(LifecycleOptions options, WallNow wall_now)
    : options_(std::move(options)), wall_now_(std::move(wall_now)) {
  last_beat_.assign(options_.servers.size(), SimTime::zero());
}

void LifecycleManager::transition(LifecycleState to, const std::string& reason) {
  if (state_ == to) return;
  state_ = to;
  last_reason_ = reason;
  for (const auto& node : options_.nodes) pending_.push_back({node, to, reason});
}

void LifecycleManager::startup() {
  const SimTime now = wall_now_();
  std::fill(last_beat_.begin(), last_beat_.end(), now);
  lost_ = false;
  if (state_ == LifecycleState::kUnconfigured) transition(LifecycleState::kInactive, "configure");
  transition(LifecycleState::kActive, "activate");
}

void LifecycleManager::deactivate(const std::string& reason) {
  lost_ = false;
  if (state_ == LifecycleState::kActive) transition(LifecycleState::kInactive, reason);
}

void LifecycleManager::heartbeat(const std::string& server) {
  const SimTime now = wall_now_();
  for (size_t i = 0; i < options_.servers.size(); ++i) {
    if (options_.servers[i] == server) last_beat_[i] = now;
  }
  if (lost_ && options_.reactivate && state_ == LifecycleState::kInactive) {
    for (const SimTime t : last_beat_) {
      if (now - t >= options_.heartbeat_timeout) return;
    }
    lost_ = false;
    transition(LifecycleState::kActive, "heartbeats restored: activate");
  }
}

bool LifecycleManager::check() {
  if (state_ != LifecycleState::kActive) return false;
  const SimTime now = wall_now_();
  for (size_t i = 0; i < options_.servers.size(); ++i) {
    const Duration silent = now - last_beat_[i];
    if (silent >= options_.heartbeat_timeout) {
      lost_ = true;
      char buf[96];
      std::snprintf(buf, sizeof buf, " silent for %.3f s of wall time (timeout %.3f s)",
                    silent.seconds_f(), options_.heartbeat_timeout.seconds_f());
      transition(LifecycleState::kInactive, "heartbeat lost: " + options_.servers[i] + buf);
      return true;
    }
  }
  return false;
}

std::vector<LifecycleTransition> LifecycleManager::take() {
  std::vector<LifecycleTransition> out;
  out.swap(pending_);
  return out;
}

}  // namespace fieldproof::stacks
