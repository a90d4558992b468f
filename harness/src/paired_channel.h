// The shared page between the paired pass's coordinator and its two workers (paired_pass.h):
// one slot per side, futex words in MAP_SHARED memory (futexes across processes need no more).
//
// Protocol, per side: the worker bumps `events` (and wakes it) whenever its state changes:
// ready (its setup ran and it waits in its loop), a batch done, an error, its body returned.
// The coordinator writes `batch_ops` (0: leave the loop) and then bumps `command`, on which the
// worker waits. Nothing here allocates: a worker waiting costs no CPU and no counted byte.
#ifndef ALLOCBENCH_HARNESS_PAIRED_CHANNEL_H_
#define ALLOCBENCH_HARNESS_PAIRED_CHANNEL_H_

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace allocbench {

struct PairedSlot {
  std::atomic<uint32_t> command{0};  // coordinator: one more per batch it asks for
  std::atomic<uint32_t> events{0};   // worker: one more per change below
  std::atomic<uint32_t> ready{0};    // worker: 1 once it waits in its loop for the first batch
  std::atomic<uint32_t> done{0};     // worker: the `command` whose batch it finished
  std::atomic<uint32_t> ended{0};    // worker: 1 once its scenario body returned
  std::atomic<uint32_t> failed{0};   // worker: 1 once `error` holds why it cannot go on
  int64_t batch_ops = 0;             // coordinator, before `command`: ops per thread; 0 = stop
  int64_t wall_ns = 0;               // worker, before `done`: the batch's wall time
  int64_t cpu_ns = 0;                // ... and its timed threads' CPU time
  char error[1024] = {};
};

struct PairedPage {
  PairedSlot side[2];  // 0: base, 1: candidate
};

static_assert(std::atomic<uint32_t>::is_always_lock_free, "futex words must be plain words");

inline void FutexWake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Returns when *word != expected, on a wake-up, a signal or after `timeout` (null: none).
inline void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, const timespec* timeout) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, timeout, nullptr, 0);
}

inline void Bump(std::atomic<uint32_t>* word) {
  word->fetch_add(1, std::memory_order_acq_rel);
  FutexWake(word);
}

inline int64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_PAIRED_CHANNEL_H_
