// Mutex, MutexLock, CondVar (and RecursiveMutex): a mutex the compiler can check. clang's
// -Wthread-safety reads the attributes below and reports, at compile time, a read or write of
// guarded state without its mutex, a function called without the mutex it requires, a lock taken
// twice or never released (std::mutex from libstdc++ carries no attributes, so clang cannot check
// code that uses it). With GCC every macro expands to nothing and the types cost what std::mutex
// costs.
//
//   class Counter {
//    public:
//     void add(int n) FIELDPROOF_EXCLUDES(mu_) {
//       MutexLock lock(mu_);
//       total_ += n;
//       cv_.notify_all();
//     }
//     int wait_above(int n) FIELDPROOF_EXCLUDES(mu_) {
//       MutexLock lock(mu_);
//       cv_.wait(mu_, [&]() FIELDPROOF_REQUIRES(mu_) { return total_ > n; });
//       return total_;
//     }
//    private:
//     Mutex mu_;
//     CondVar cv_;
//     int total_ FIELDPROOF_GUARDED_BY(mu_) = 0;
//   };
//
// A predicate passed to CondVar::wait runs with the mutex held: annotate the lambda with
// FIELDPROOF_REQUIRES(the mutex), as above (clang analyses a lambda as a function of its own).
// The check: `ctest -L tsa` (docs/contributing.md).
//
// Threads: Mutex is not recursive; CondVar::wait* must be called with the given mutex held by the
// calling thread (clang checks it), and hold it again on return.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define FIELDPROOF_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define FIELDPROOF_THREAD_ANNOTATION(x)
#endif

// On a class: it is a capability (a lock) named `x` in diagnostics.
#define FIELDPROOF_CAPABILITY(x) FIELDPROOF_THREAD_ANNOTATION(capability(x))
// On a class: an RAII object that holds a capability for its lifetime.
#define FIELDPROOF_SCOPED_CAPABILITY FIELDPROOF_THREAD_ANNOTATION(scoped_lockable)
// On a member or variable: read and written only with mutex `x` held.
#define FIELDPROOF_GUARDED_BY(x) FIELDPROOF_THREAD_ANNOTATION(guarded_by(x))
// On a pointer: what it points to is read and written only with mutex `x` held.
#define FIELDPROOF_PT_GUARDED_BY(x) FIELDPROOF_THREAD_ANNOTATION(pt_guarded_by(x))
// On a mutex: the order in which locks are taken (checked with -Wthread-safety-beta).
#define FIELDPROOF_ACQUIRED_BEFORE(...) FIELDPROOF_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define FIELDPROOF_ACQUIRED_AFTER(...) FIELDPROOF_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
// On a function: the caller holds these mutexes (and still holds them on return).
#define FIELDPROOF_REQUIRES(...) FIELDPROOF_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// On a function: the caller must not hold these mutexes (the function takes them).
#define FIELDPROOF_EXCLUDES(...) FIELDPROOF_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function: it takes / releases these mutexes (none named: `this`).
#define FIELDPROOF_ACQUIRE(...) FIELDPROOF_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define FIELDPROOF_RELEASE(...) FIELDPROOF_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// On a function: it takes the mutexes when it returns `result`.
#define FIELDPROOF_TRY_ACQUIRE(...) \
  FIELDPROOF_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// On a function: after it returns, the analysis assumes the mutex is held.
#define FIELDPROOF_ASSERT_CAPABILITY(x) FIELDPROOF_THREAD_ANNOTATION(assert_capability(x))
// On a function: it returns a reference to mutex `x`.
#define FIELDPROOF_RETURN_CAPABILITY(x) FIELDPROOF_THREAD_ANNOTATION(lock_returned(x))
// On a function: not analysed. Only where the analysis cannot follow (say why beside it).
#define FIELDPROOF_NO_THREAD_SAFETY_ANALYSIS FIELDPROOF_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace fieldproof {

class CondVar;

// A non-recursive mutex (std::mutex underneath), BasicLockable and Lockable.
class FIELDPROOF_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() FIELDPROOF_ACQUIRE() { mu_.lock(); }
  void unlock() FIELDPROOF_RELEASE() { mu_.unlock(); }
  bool try_lock() FIELDPROOF_TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex from construction to destruction; unlock() and lock() release and take it again
// in between (the destructor releases it only if held).
class FIELDPROOF_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) FIELDPROOF_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() FIELDPROOF_RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() FIELDPROOF_RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  void lock() FIELDPROOF_ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// A recursive mutex (std::recursive_mutex underneath): the thread that holds it may take it again
// (a callback run under it calling back in). The analysis sees one level of holding.
class FIELDPROOF_CAPABILITY("mutex") RecursiveMutex {
 public:
  RecursiveMutex() = default;
  RecursiveMutex(const RecursiveMutex&) = delete;
  RecursiveMutex& operator=(const RecursiveMutex&) = delete;

  void lock() FIELDPROOF_ACQUIRE() { mu_.lock(); }
  void unlock() FIELDPROOF_RELEASE() { mu_.unlock(); }

 private:
  std::recursive_mutex mu_;
};

// Holds a RecursiveMutex from construction to destruction.
class FIELDPROOF_SCOPED_CAPABILITY RecursiveMutexLock {
 public:
  explicit RecursiveMutexLock(RecursiveMutex& mu) FIELDPROOF_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~RecursiveMutexLock() FIELDPROOF_RELEASE() { mu_.unlock(); }
  RecursiveMutexLock(const RecursiveMutexLock&) = delete;
  RecursiveMutexLock& operator=(const RecursiveMutexLock&) = delete;

 private:
  RecursiveMutex& mu_;
};

// A condition variable over a Mutex (std::condition_variable underneath). Every wait releases `mu`
// while blocked and holds it again on return; a wait may return spuriously (the predicate forms
// loop until the predicate holds).
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void notify_one() noexcept { cv_.notify_one(); }
  void notify_all() noexcept { cv_.notify_all(); }

  void wait(Mutex& mu) FIELDPROOF_REQUIRES(mu) {
    Adopted lk(mu);
    cv_.wait(lk.lock);
  }
  template <class Clock, class Dur>
  std::cv_status wait_until(Mutex& mu, const std::chrono::time_point<Clock, Dur>& t)
      FIELDPROOF_REQUIRES(mu) {
    Adopted lk(mu);
    return cv_.wait_until(lk.lock, t);
  }
  template <class Rep, class Period>
  std::cv_status wait_for(Mutex& mu, const std::chrono::duration<Rep, Period>& d)
      FIELDPROOF_REQUIRES(mu) {
    Adopted lk(mu);
    return cv_.wait_for(lk.lock, d);
  }

  // The predicate forms. The analysis cannot see that `pred` runs with `mu` held, so these are
  // not analysed inside; the caller's FIELDPROOF_REQUIRES(mu) still is, and `pred` (a lambda
  // annotated FIELDPROOF_REQUIRES(mu)) is checked where it is written.
  template <class Pred>
  void wait(Mutex& mu, Pred pred) FIELDPROOF_REQUIRES(mu) FIELDPROOF_NO_THREAD_SAFETY_ANALYSIS {
    while (!pred()) wait(mu);
  }
  template <class Clock, class Dur, class Pred>
  bool wait_until(Mutex& mu, const std::chrono::time_point<Clock, Dur>& t, Pred pred)
      FIELDPROOF_REQUIRES(mu) FIELDPROOF_NO_THREAD_SAFETY_ANALYSIS {
    Adopted lk(mu);
    return cv_.wait_until(lk.lock, t, std::move(pred));
  }
  template <class Rep, class Period, class Pred>
  bool wait_for(Mutex& mu, const std::chrono::duration<Rep, Period>& d, Pred pred)
      FIELDPROOF_REQUIRES(mu) FIELDPROOF_NO_THREAD_SAFETY_ANALYSIS {
    Adopted lk(mu);
    return cv_.wait_for(lk.lock, d, std::move(pred));
  }

 private:
  // The caller's lock seen as a std::unique_lock for the wait, handed back (not unlocked) at the
  // end of the scope, even if the wait throws.
  struct Adopted {
    explicit Adopted(Mutex& mu) : lock(mu.mu_, std::adopt_lock) {}
    ~Adopted() { lock.release(); }
    Adopted(const Adopted&) = delete;
    Adopted& operator=(const Adopted&) = delete;
    std::unique_lock<std::mutex> lock;
  };
  std::condition_variable cv_;
};

}  // namespace fieldproof
