// A reusable barrier for the count pass's scenario threads. Unlike pthread_barrier_t it can be
// aborted: a thread that leaves its loop early (SkipWithError, a missing loop) must not leave
// the others waiting forever. std::mutex and std::condition_variable do not allocate on Linux,
// so waiting here never shows up in the counts.
#ifndef ALLOCBENCH_HARNESS_BARRIER_H_
#define ALLOCBENCH_HARNESS_BARRIER_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace allocbench {

class Barrier {
 public:
  explicit Barrier(int participants) : participants_(participants) {}

  // Blocks until every participant has arrived. Returns false, at once and from then on, once
  // the barrier is aborted. `*last` (if given) is set for exactly one thread per crossing.
  bool Wait(bool* last) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (aborted_) return false;
    const uint64_t generation = generation_;
    if (++arrived_ == participants_) {
      arrived_ = 0;
      ++generation_;
      if (last != nullptr) *last = true;
      cv_.notify_all();
      return true;
    }
    if (last != nullptr) *last = false;
    cv_.wait(lock, [&] { return aborted_ || generation_ != generation; });
    return generation_ != generation;
  }

  void Abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  const int participants_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
};

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_BARRIER_H_
