// Count()'s window: the calling thread's mode and observers around one counted call, and
// whether the process can count at all.
#include <stdlib.h>

#include <cstring>
#include <mutex>
#include <new>

#include "allocbench/counting.h"
#include "allocbench/testing.h"
#include "hook_anchors.h"
#include "recorder.h"

// Defined by a sanitizer's runtime, which then owns malloc: the hooks cannot count there.
extern "C" {
__attribute__((weak)) void __asan_init();
__attribute__((weak)) void __tsan_init();
__attribute__((weak)) void __msan_init();
__attribute__((weak)) void __hwasan_init();
__attribute__((weak)) void __lsan_do_leak_check();
}

namespace allocbench::testing {
namespace {

namespace counting = allocbench::counting;

// The hook objects come from the archive with this one, which every check and count uses.
ALLOCBENCH_ANCHOR_HOOKS();

// Only requested bytes are needed: no usable-size look-ups on the allocation path.
[[maybe_unused]] const bool g_basic_tracking = [] {
  counting::SetTracking(counting::Tracking::kBasic);
  return true;
}();

// kAll windows, one at a time; recursive, so that one may nest in another on its thread.
std::recursive_mutex g_all_threads;
int g_all_depth = 0;  // guarded by g_all_threads
// The background observer kAll windows set, guarded by g_all_threads: only they change it, so
// an inner window reads its chain here, never by swapping the live pointer (another thread's
// event could fall between).
counting::Observer* g_background_current = nullptr;

const char* FindReason() noexcept {
  if (&__asan_init != nullptr) {
    return "AddressSanitizer owns malloc and operator new in this process, so allocbench cannot "
           "count allocations; run the allocation checks in a build without sanitizers";
  }
  if (&__tsan_init != nullptr) {
    return "ThreadSanitizer owns malloc and operator new in this process, so allocbench cannot "
           "count allocations; run the allocation checks in a build without sanitizers";
  }
  if (&__msan_init != nullptr || &__hwasan_init != nullptr || &__lsan_do_leak_check != nullptr) {
    return "a sanitizer owns malloc and operator new in this process, so allocbench cannot "
           "count allocations; run the allocation checks in a build without sanitizers";
  }
  if (std::strcmp(counting::BackendName(), "none") == 0) {
    return "this executable has no allocbench hooks (link allocbench::testing into it, not only "
           "the counters), so allocations cannot be counted";
  }
  // The hooks are linked: one malloc must count as one allocation of its size.
  void* (*volatile allocate)(size_t) = &malloc;
  internal::Window window(Threads::kThisThread, internal::Detail::kBlocks);
  void* p = allocate(7);
  free(p);
  const Counts counts = window.Close();
  if (counts.allocs != 1 || counts.bytes != 7 || counts.frees != 1) {
    return "allocbench's hooks are linked but malloc(7) was not counted as one allocation of "
           "7 B (is another malloc replacement linked before them?)";
  }
  return "";
}

const char* Reason() noexcept {
  static const char* const reason = FindReason();
  return reason;
}

}  // namespace

bool Available() noexcept { return *Reason() == '\0'; }
const char* UnavailableReason() noexcept { return Reason(); }

// Paused whatever the mode: a thread outside any count is not counted by a Threads::kAll one
// during the scope either.
PermitAllocations::PermitAllocations() noexcept : saved_(counting::GetMode()) {
  if (saved_ != counting::Mode::kIgnored) counting::SetMode(counting::Mode::kPaused);
}
PermitAllocations::~PermitAllocations() {
  if (saved_ != counting::Mode::kIgnored) counting::SetMode(saved_);
}

namespace internal {

Window::Window(Threads threads, Detail detail) : threads_(threads) {
  static_assert(sizeof(Recorder) <= kRecorderSize && alignof(Recorder) <= 16,
                "Window::storage_ must hold a Recorder");
  recorder_ = new (storage_) Recorder(detail == Detail::kStacks);
  own_counters_ = detail == Detail::kCounts && threads_ == Threads::kThisThread;
  if (threads_ == Threads::kAll) {
    g_all_threads.lock();  // does not allocate
  }
  Open();
}

void Window::Open() noexcept {
  saved_mode_ = counting::GetMode();
  // Paused until the end: no event of this thread comes between the steps below.
  if (saved_mode_ == counting::Mode::kCounting) counting::SetMode(counting::Mode::kPaused);
  if (own_counters_) {
    // Entering kCounting claims the thread's slot; without one (more than 4096 threads) its
    // counts are mixed with others': record blocks instead.
    counting::SetMode(counting::Mode::kCounting);
    counting::SetMode(counting::Mode::kPaused);
    own_counters_ = counting::ReadThisThread(&start_);
  }
  // Under an enclosing count's PermitAllocations, or outside any: no observer sees these
  // events (an enclosing count's does, through the thread's own observer, when it counts).
  if (own_counters_ && saved_mode_ != counting::Mode::kCounting) {
    saved_thread_observer_ = counting::SetThreadObserver(nullptr);
  }
  if (!own_counters_) {
    // Inside an enclosing count (and not in its PermitAllocations), events go on to it.
    saved_thread_observer_ = counting::SetThreadObserver(recorder_->observer());
    saved_background_observer_ = g_background_current;
    recorder_->Chain(saved_mode_ == counting::Mode::kCounting ? saved_thread_observer_ : nullptr,
                     threads_ == Threads::kAll ? saved_background_observer_ : nullptr);
  }
  if (threads_ == Threads::kAll) {
    g_background_current = recorder_->observer();
    counting::SetBackgroundObserver(g_background_current);
    if (g_all_depth++ == 0) counting::SetBackgroundWindow(true);
  }
  open_ = true;
  counting::SetMode(counting::Mode::kCounting);  // last: counting starts here
}

Counts Window::Close() noexcept {
  if (!open_) return counts_;
  counting::SetMode(counting::Mode::kPaused);  // first: counting stops here
  open_ = false;
  if (own_counters_) {
    counting::Counters end;
    if (counting::ReadThisThread(&end)) {
      counts_.allocs = end.allocs - start_.allocs;
      counts_.frees = end.frees - start_.frees;
      counts_.bytes = end.requested_bytes - start_.requested_bytes;
    }
    if (saved_mode_ != counting::Mode::kCounting)
      counting::SetThreadObserver(saved_thread_observer_);
    counting::SetMode(saved_mode_);
    return counts_;
  }
  if (threads_ == Threads::kAll) {
    if (--g_all_depth == 0) counting::SetBackgroundWindow(false);
    g_background_current = saved_background_observer_;
    counting::SetBackgroundObserver(g_background_current);
  }
  counting::SetThreadObserver(saved_thread_observer_);
  counting::SetMode(saved_mode_);
  if (threads_ == Threads::kAll) g_all_threads.unlock();
  counts_ = recorder_->counts();
  return counts_;
}

Window::~Window() {
  Close();
  PermitAllocations teardown;  // the recorder frees its tables: nothing of a count's
  recorder_->~Recorder();
}

Counts CountCallable(Callable f, Threads threads) {
  if (!Available()) throw Unavailable(std::string("allocbench::testing: ") + UnavailableReason());
  Window window(threads, Detail::kBlocks);
  f();
  return window.Close();
}

}  // namespace internal
}  // namespace allocbench::testing
