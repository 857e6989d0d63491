#include "fieldproof/lockstep/executor.hpp"

namespace fieldproof::lockstep {

SingleThreadedExecutor::SingleThreadedExecutor(Participant& participant)
    : participant_(&participant) {}

bool SingleThreadedExecutor::spin() {
  return participant_->main_thread().spin_until(SimTime::infinite());
}

bool SingleThreadedExecutor::spin_until(SimTime until) {
  return participant_->main_thread().spin_until(until);
}

void SingleThreadedExecutor::stop() { participant_->main_thread().stop(); }

MultiThreadedExecutor::MultiThreadedExecutor(Participant& participant, size_t threads)
    : participant_(&participant) {
  threads_.push_back(&participant.main_thread());
  for (size_t i = 1; i < threads; ++i) {
    threads_.push_back(&participant.thread("worker-" + std::to_string(i)));
  }
}

MultiThreadedExecutor::~MultiThreadedExecutor() {
  for (size_t i = 1; i < threads_.size(); ++i) threads_[i]->leave();
}

bool MultiThreadedExecutor::spin() { return spin_until(SimTime::infinite()); }

bool MultiThreadedExecutor::spin_until(SimTime until) {
  std::vector<std::thread> workers;
  std::vector<char> results(threads_.size(), 0);
  for (size_t i = 1; i < threads_.size(); ++i) {
    workers.emplace_back([this, i, until, &results] {
      results[i] = threads_[i]->spin_until(until) ? 1 : 0;
    });
  }
  results[0] = threads_[0]->spin_until(until) ? 1 : 0;
  // The main thread ended (time reached, stop or failure): end the workers too unless they
  // reach `until` by themselves.
  if (results[0] == 0) {
    for (size_t i = 1; i < threads_.size(); ++i) threads_[i]->stop();
  }
  for (auto& w : workers) w.join();
  for (char r : results) {
    if (r == 0) return false;
  }
  return true;
}

void MultiThreadedExecutor::stop() {
  for (ParticipantThread* t : threads_) t->stop();
}

}  // namespace fieldproof::lockstep
