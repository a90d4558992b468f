#include "recorder.h"

#include <execinfo.h>
#include <stdlib.h>

namespace allocbench::testing::internal {
namespace {

class SpinLock {
 public:
  explicit SpinLock(std::atomic<bool>& lock) noexcept : lock_(lock) {
    while (lock_.exchange(true, std::memory_order_acquire)) {
      while (lock_.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  ~SpinLock() { lock_.store(false, std::memory_order_release); }
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

 private:
  std::atomic<bool>& lock_;
};

size_t Hash(uintptr_t key) { return static_cast<size_t>((key >> 4) * 0x9E3779B97F4A7C15ull); }

constexpr size_t kFirstCapacity = 64;

}  // namespace

Recorder::Recorder(bool capture) noexcept : capture_(capture) {
  observer_.on_alloc = &Recorder::OnAlloc;
  observer_.on_free = &Recorder::OnFree;
}

Recorder::~Recorder() {
  free(slots_);
  free(events_);
}

void Recorder::Chain(counting::Observer* thread_next,
                     counting::Observer* background_next) noexcept {
  thread_next_ = thread_next;
  background_next_ = background_next;
}

Counts Recorder::counts() const noexcept {
  Counts counts;
  counts.allocs = allocs_;
  counts.frees = frees_;
  counts.bytes = bytes_;
  counts.net_bytes = live_bytes_;
  return counts;
}

// The observer is the recorder's first member: its address is the recorder's.
void Recorder::OnAlloc(counting::Observer* self, void* p, size_t requested) noexcept {
  Recorder* recorder = reinterpret_cast<Recorder*>(self);
  recorder->Alloc(p, requested);
  // Which chain: the event is this thread's own (kCounting) or a background one.
  counting::Observer* next = counting::GetMode() == counting::Mode::kCounting
                                 ? recorder->thread_next_
                                 : recorder->background_next_;
  if (next != nullptr) next->on_alloc(next, p, requested);
}

void Recorder::OnFree(counting::Observer* self, void* p) noexcept {
  Recorder* recorder = reinterpret_cast<Recorder*>(self);
  recorder->Free(p);
  counting::Observer* next = counting::GetMode() == counting::Mode::kCounting
                                 ? recorder->thread_next_
                                 : recorder->background_next_;
  if (next != nullptr) next->on_free(next, p);
}

void Recorder::Alloc(void* p, size_t requested) noexcept {
  SpinLock lock(lock_);
  ++allocs_;
  bytes_ += requested;
  int32_t event = -1;
  if (capture_ && events_size_ < kCaptured) {
    if (events_ == nullptr) {
      events_ = static_cast<Event*>(malloc(sizeof(Event) * kCaptured));
      if (events_ == nullptr) lost_ = true;
    }
    if (events_ != nullptr) {
      Event& e = events_[events_size_];
      e.depth = backtrace(e.frames, Event::kDepth);
      e.bytes = requested;
      e.freed = false;
      event = events_size_++;
    }
  }
  if ((size_ + 1) * 2 > capacity_ && !Grow()) {
    lost_ = true;
    return;
  }
  const uintptr_t key = reinterpret_cast<uintptr_t>(p);
  const size_t slot = Find(key);
  if (slots_[slot].key == key) {  // cannot happen for a live block; keep the table exact
    live_bytes_ -= static_cast<int64_t>(slots_[slot].bytes);
  } else {
    ++size_;
  }
  slots_[slot] = {key, requested, event};
  live_bytes_ += static_cast<int64_t>(requested);
}

void Recorder::Free(void* p) noexcept {
  SpinLock lock(lock_);
  ++frees_;
  if (capacity_ == 0) return;
  const size_t slot = Find(reinterpret_cast<uintptr_t>(p));
  if (slots_[slot].key == 0) return;  // a block from before the call
  live_bytes_ -= static_cast<int64_t>(slots_[slot].bytes);
  if (slots_[slot].event >= 0) events_[slots_[slot].event].freed = true;
  Erase(slot);
}

size_t Recorder::Find(uintptr_t key) const noexcept {
  const size_t mask = capacity_ - 1;
  size_t slot = Hash(key) & mask;
  while (slots_[slot].key != 0 && slots_[slot].key != key) slot = (slot + 1) & mask;
  return slot;
}

// Backward-shift deletion: no tombstones, so lookups stay short however many frees.
void Recorder::Erase(size_t slot) noexcept {
  const size_t mask = capacity_ - 1;
  size_t hole = slot;
  for (size_t next = (hole + 1) & mask; slots_[next].key != 0; next = (next + 1) & mask) {
    const size_t home = Hash(slots_[next].key) & mask;
    // Move `next` into the hole unless its home lies cyclically in (hole, next].
    const bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
    if (stays) continue;
    slots_[hole] = slots_[next];
    hole = next;
  }
  slots_[hole].key = 0;
  --size_;
}

bool Recorder::Grow() noexcept {
  const size_t capacity = capacity_ == 0 ? kFirstCapacity : capacity_ * 2;
  Slot* old = slots_;
  const size_t old_capacity = capacity_;
  Slot* grown = static_cast<Slot*>(calloc(capacity, sizeof(Slot)));
  if (grown == nullptr) return false;
  slots_ = grown;
  capacity_ = capacity;
  for (size_t i = 0; i < old_capacity; ++i) {
    if (old[i].key != 0) slots_[Find(old[i].key)] = old[i];
  }
  free(old);
  return true;
}

}  // namespace allocbench::testing::internal
