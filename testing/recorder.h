// Internal to testing/: the counting layer's Observer behind a Window. It counts the events it
// is passed, tracks the call's own live blocks (for net_bytes) and, when asked, keeps the call
// stacks of the first allocations. Its callbacks run inside malloc/free under the counting
// layer's re-entry guard: what they allocate is neither counted nor observed, and they never
// throw (an allocation that fails only loses tracking, see lost()).
#ifndef ALLOCBENCH_TESTING_RECORDER_H_
#define ALLOCBENCH_TESTING_RECORDER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "allocbench/counting.h"
#include "allocbench/testing.h"

namespace allocbench::testing::internal {

// One allocation whose stack was captured, in the order made.
struct Event {
  static constexpr int kDepth = 32;
  void* frames[kDepth];
  int depth;
  uint64_t bytes;
  bool freed;  // freed before the call returned
};

class Recorder {
 public:
  static constexpr int kCaptured = 64;  // stacks kept; later allocations are only counted

  explicit Recorder(bool capture) noexcept;
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  counting::Observer* observer() { return &observer_; }
  // Events also go on to the observer of an enclosing count (nullptr: none).
  void Chain(counting::Observer* thread_next, counting::Observer* background_next) noexcept;

  Counts counts() const noexcept;  // REQUIRES: the window is closed
  int events() const { return events_size_; }
  const Event& event(int i) const { return events_[i]; }
  // An allocation failed inside a callback: net_bytes or the stacks may be incomplete.
  bool lost() const { return lost_; }

 private:
  struct Slot {
    uintptr_t key;  // 0: empty
    uint64_t bytes;
    int32_t event;  // index into events_, or -1
  };
  static void OnAlloc(counting::Observer* self, void* p, size_t requested) noexcept;
  static void OnFree(counting::Observer* self, void* p) noexcept;
  void Alloc(void* p, size_t requested) noexcept;
  void Free(void* p) noexcept;
  bool Grow() noexcept;
  size_t Find(
      uintptr_t key) const noexcept;  // the slot holding key, or the empty one ending its run
  void Erase(size_t slot) noexcept;

  counting::Observer observer_;  // first: the callbacks find the recorder from it
  counting::Observer* thread_next_ = nullptr;
  counting::Observer* background_next_ = nullptr;
  std::atomic<bool> lock_{false};  // kAll: background events come from any thread
  bool capture_;
  bool lost_ = false;
  uint64_t allocs_ = 0, frees_ = 0, bytes_ = 0;
  int64_t live_bytes_ = 0;
  Slot* slots_ = nullptr;  // open addressing, linear probing; capacity a power of two
  size_t capacity_ = 0, size_ = 0;
  Event* events_ = nullptr;
  int events_size_ = 0;
};

}  // namespace allocbench::testing::internal

#endif  // ALLOCBENCH_TESTING_RECORDER_H_
