// allocbench::testing: exact allocation counts of a piece of code, for unit tests.
//
//   target_link_libraries(my_tests PRIVATE allocbench::testing)
//
//   allocbench::testing::Counts c = allocbench::testing::Count([&] { schema.Name(kHttp); });
//   // c.allocs == 0, c.bytes == 0
//
// The framework-neutral core. The checks of GoogleTest (ALLOCBENCH_EXPECT_NO_ALLOC & co.) are
// in <allocbench/testing_gtest.h>, Catch2's in <allocbench/testing_catch2.h>.
//
// What is counted: every allocation and free the calling thread makes while `f` runs, through
// any operator new/delete form or the malloc family (strdup, calloc, aligned forms, realloc
// as a free plus an allocation), including those of libstdc++ and of shared libraries.
// Requested bytes, so the numbers are the same under every allocator. Not counted: other
// threads (unless Threads::kAll), the parts under a PermitAllocations, and the library's own
// bookkeeping.
//
// Nesting: a Count inside a counted call is counted by both, unless it runs inside a
// PermitAllocations of the outer one, where it counts for itself only. Several threads may
// Count at once, each its own. An exception out of `f` ends the count and propagates.
#ifndef ALLOCBENCH_TESTING_H_
#define ALLOCBENCH_TESTING_H_

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "allocbench/counting.h"

namespace allocbench::testing {

struct Counts {
  uint64_t allocs = 0;  // allocation calls
  uint64_t frees = 0;   // free calls (of any block, also one allocated before the call)
  uint64_t bytes = 0;   // bytes requested by those allocations
  // Bytes requested by the call's own allocations that were still allocated when it returned
  // (0: it leaves nothing behind). Freeing an older block does not make it negative.
  int64_t net_bytes = 0;
};

// Whose allocations a Count counts. kAll adds every thread that is not itself inside a Count
// (a pool the code hands work to); kAll counts run one at a time, process-wide.
enum class Threads : uint8_t { kThisThread, kAll };

// Whether this process can count: false under a sanitizer (which owns malloc) or in a binary
// without allocbench's hooks. UnavailableReason() says which, or "" when Available().
bool Available() noexcept;
const char* UnavailableReason() noexcept;

// Thrown by Count (and the functions built on it) when !Available(): a count of zero that was
// never measured must not pass a test.
class Unavailable : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Excludes what the calling thread allocates and frees during its scope from every count (an
// error path that logs, a cache filled once), its own and a Threads::kAll one of another
// thread. A Count inside it counts for itself only.
class PermitAllocations {
 public:
  PermitAllocations() noexcept;
  ~PermitAllocations();
  PermitAllocations(const PermitAllocations&) = delete;
  PermitAllocations& operator=(const PermitAllocations&) = delete;

 private:
  counting::Mode saved_;
};

namespace internal {

class Recorder;

// A callable by reference, without allocating (std::function may).
struct Callable {
  void (*call)(void* context);
  void* context;
  void operator()() const { call(context); }
};
// REQUIRES: `f` outlives the Callable. A function is called through a lambda of its own.
template <typename F>
Callable CallableOf(F& f) {
  if constexpr (std::is_function_v<F>) {
    return {[](void* context) { reinterpret_cast<F*>(context)(); }, reinterpret_cast<void*>(&f)};
  } else {
    // A const lambda is called as const; the pointer only carries it.
    return {[](void* context) { (*static_cast<F*>(context))(); },
            const_cast<void*>(static_cast<const void*>(&f))};
  }
}

// What a Window records. kCounts: allocations, frees and bytes only, read from the thread's own
// counters (the hooks' fast path; net_bytes stays 0; Threads::kAll records kBlocks). kBlocks:
// also each block of the call, through the counting layer's observer, for net_bytes. kStacks:
// also the first allocations' call stacks, for a failure message.
enum class Detail : uint8_t { kCounts, kBlocks, kStacks };

// One counted call: counting starts at the end of the constructor and stops at the start of
// Close() (or of the destructor, when the call threw).
class Window {
 public:
  Window(Threads threads, Detail detail);
  ~Window();
  Counts Close() noexcept;
  const Recorder& recorder() const { return *recorder_; }
  static constexpr size_t kRecorderSize = 128;  // window.cc checks it fits
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

 private:
  void Open() noexcept;
  alignas(16) unsigned char storage_[kRecorderSize];  // the Recorder: no allocation per count
  Recorder* recorder_;
  Threads threads_;
  bool open_ = false;
  counting::Mode saved_mode_ = counting::Mode::kUnassigned;
  counting::Observer* saved_thread_observer_ = nullptr;
  counting::Observer* saved_background_observer_ = nullptr;
  bool own_counters_ = false;  // kCounts on the thread's counters, from start_
  counting::Counters start_;
  Counts counts_;  // once closed
};

Counts CountCallable(Callable f, Threads threads);

}  // namespace internal

// Runs f() once on the calling thread, counting what it allocates (see the top of this file).
// Throws Unavailable when !Available(); whatever f() throws propagates, counting stopped.
template <typename F>
Counts Count(F&& f, Threads threads = Threads::kThisThread) {
  return internal::CountCallable(internal::CallableOf(f), threads);
}

namespace internal {
// One warm-up call of f(), then the counts of `runs` more. REQUIRES: runs > 0.
template <typename F>
Counts CountRuns(const char* function, int runs, F& f) {
  if (runs <= 0) throw std::invalid_argument(std::string(function) + ": runs must be > 0");
  f();
  return Count([&] {
    for (int i = 0; i < runs; ++i) f();
  });
}
}  // namespace internal

// Go's testing.AllocsPerRun: one call of f() to warm up (not counted), then the mean number of
// allocations per call over `runs` calls, exact (Go truncates to an integer). REQUIRES: runs > 0
// (std::invalid_argument otherwise).
template <typename F>
double AllocsPerRun(int runs, F&& f) {
  return static_cast<double>(internal::CountRuns("AllocsPerRun", runs, f).allocs) / runs;
}

// The same for requested bytes per call.
template <typename F>
double BytesPerRun(int runs, F&& f) {
  return static_cast<double>(internal::CountRuns("BytesPerRun", runs, f).bytes) / runs;
}

// --- the checks behind the GoogleTest and Catch2 macros --------------------------------------

namespace internal {

enum class Kind : uint8_t { kNoAlloc, kExactly, kAtMost, kNoLeak };

struct Expectation {
  Kind kind;
  uint64_t allocs = 0;
  uint64_t bytes = 0;
};

class Verdict {
 public:
  enum class State : uint8_t { kPassed, kFailed, kSkipped };
  Verdict(State state, std::string message) : state_(state), message_(std::move(message)) {}
  explicit operator bool() const { return state_ == State::kPassed; }
  bool skipped() const { return state_ == State::kSkipped; }
  const std::string& message() const { return message_; }

 private:
  State state_;
  std::string message_;
};

// Runs the statement once, counted; on failure, builds the message that lists where the
// allocations were made (running the statement a second time to capture their stacks, except
// for kNoAlloc, whose first run captures them: any allocation fails it). `macro` and `text`
// name the check in the message. When !Available(), runs the statement uncounted and skips.
Verdict CheckCallable(const Expectation& expectation, const char* macro, const char* text,
                      Callable statement);

template <typename F>
Verdict Check(const Expectation& expectation, const char* macro, const char* text, F&& f) {
  return CheckCallable(expectation, macro, text, CallableOf(f));
}

}  // namespace internal
}  // namespace allocbench::testing

#endif  // ALLOCBENCH_TESTING_H_
