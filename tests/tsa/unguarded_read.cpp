// The planted violation of tsa.catches_unguarded_read: as it is, every guarded member is read
// under its mutex and the check passes; with -DFIELDPROOF_TSA_PLANT_VIOLATION one read is made
// without the lock and clang -Wthread-safety -Werror must reject the file.
#include "fieldproof/util/mutex.hpp"

namespace {

class Counter {
 public:
  void add(int n) FIELDPROOF_EXCLUDES(mu_) {
    fieldproof::MutexLock lock(mu_);
    total_ += n;
    cv_.notify_all();
  }
  int wait_above(int n) FIELDPROOF_EXCLUDES(mu_) {
    fieldproof::MutexLock lock(mu_);
    cv_.wait(mu_, [&]() FIELDPROOF_REQUIRES(mu_) { return total_ > n; });
    return total_;
  }
  int peek() FIELDPROOF_EXCLUDES(mu_) {
#if defined(FIELDPROOF_TSA_PLANT_VIOLATION)
    return total_;  // planted: read without holding mu_
#else
    fieldproof::MutexLock lock(mu_);
    return total_;
#endif
  }

 private:
  fieldproof::Mutex mu_;
  fieldproof::CondVar cv_;
  int total_ FIELDPROOF_GUARDED_BY(mu_) = 0;
};

}  // namespace

int main() {
  Counter c;
  c.add(2);
  return c.wait_above(1) + c.peek() == 4 ? 0 : 1;
}
