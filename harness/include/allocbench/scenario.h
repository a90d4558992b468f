// allocbench scenario API: the one header a scenario author includes.
//
//   #include <allocbench/scenario.h>
//
//   ALLOCBENCH_SCENARIO(WebServerSpan, state) {
//     Tracer tracer;                       // setup: never counted, never timed
//     for (auto _ : state) {               // only this loop is measured
//       auto span = tracer.StartSpan("web.request");
//       allocbench::DoNotOptimize(span);
//     }
//   }
//   ALLOCBENCH_REGISTER(WebServerSpan)->Name("span_creation/web_server")->Args({7});
//
// A shared library built from such sources is a plugin: `allocbench-run --plugin lib.so` runs
// each registered scenario twice, once under the allocation-counting pass (exact bytes and
// allocations per op) and once under Google Benchmark (ns per op). Both passes run the same
// compiled body: the loop is a count-down over batches whose size the harness chooses, so an
// iteration costs one decrement and one compare in either pass, and all harness work happens at
// batch boundaries, outside counting and timing.
//
// Contract for scenario bodies:
//  - Everything before and after `for (auto _ : state)` is setup/teardown: not counted or timed.
//  - The loop must run to its end (no `break`/`return` inside it); to give up, call
//    SkipWithError() and then leave the loop or return.
//  - With Threads(n), the body runs on n threads at once; setup runs once per thread.
//  - Code between PauseTiming() and ResumeTiming() is neither counted nor timed.
#ifndef ALLOCBENCH_SCENARIO_H_
#define ALLOCBENCH_SCENARIO_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// Bumped whenever anything below that crosses the plugin boundary changes layout or meaning.
// allocbench-run refuses a plugin whose version differs.
#define ALLOCBENCH_SCENARIO_API_VERSION 1

#define ALLOCBENCH_PRIVATE_CONCAT2(a, b) a##b
#define ALLOCBENCH_PRIVATE_CONCAT(a, b) ALLOCBENCH_PRIVATE_CONCAT2(a, b)

// Hidden in plugins: every plugin keeps its own copy of these entities, so two plugins'
// registries can never bind to each other (or to the harness) through the dynamic linker.
#ifdef ALLOCBENCH_HOST
#define ALLOCBENCH_PRIVATE_VISIBILITY
#else
#define ALLOCBENCH_PRIVATE_VISIBILITY __attribute__((visibility("hidden")))
#endif

namespace allocbench ALLOCBENCH_PRIVATE_VISIBILITY {

namespace internal {

struct FootprintData {
  int64_t rss_bytes;
  int64_t allocator_mapped_bytes;
  int64_t allocator_allocated_bytes;
};

// Implemented by allocbench-run, one per pass. `ctx` is the harness's per-thread context.
struct Host {
  int64_t (*start)(void* ctx);  // the loop begins; returns the first batch size (0: no iterations)
  int64_t (*next)(void* ctx);   // a batch ended; returns the next batch size (0: the loop is over)
  void (*pause)(void* ctx);
  void (*resume)(void* ctx);
  void (*skip)(void* ctx, const char* message);
  void (*count_this_thread)(void* ctx);  // may be called from any thread
  void (*set_counter)(void* ctx, const char* name, double value, const char* unit);
  FootprintData (*footprint)(void* ctx);
};

}  // namespace internal

// The process's memory footprint at one moment, for floor-type scenarios.
struct Footprint {
  int64_t rss_bytes;                  // resident set size (/proc/self/statm)
  int64_t allocator_mapped_bytes;     // what the allocator holds from the OS, by its own stats
  int64_t allocator_allocated_bytes;  // what the allocator has handed out and not taken back
};

class State {
 public:
  struct __attribute__((unused)) Value {};

  class Iterator {
   public:
    Iterator(State* state, int64_t batch) : remaining_(batch), state_(state) {}
    Value operator*() const { return Value(); }
    void operator++() { --remaining_; }
    bool operator!=(const Iterator&) {
      if (__builtin_expect(remaining_ != 0, 1)) return true;
      return state_->NextBatch(&remaining_);
    }

   private:
    int64_t remaining_;
    State* state_;
  };

  Iterator begin() {
    int64_t batch = host_->start(ctx_);
    started_ = true;
    if (batch == 0) finished_ = true;
    return Iterator(this, batch);
  }
  Iterator end() { return Iterator(this, 0); }

  // The i-th argument of this instance (from Args()/Arg()).
  // REQUIRES: index < number of arguments; otherwise the scenario is skipped with an error.
  int64_t range(std::size_t index = 0) {
    if (index < num_args_) return args_[index];
    SkipWithError("state.range(i) asked for an argument this instance does not have");
    return 0;
  }
  int threads() const { return threads_; }
  int thread_index() const { return thread_index_; }

  // Stops counting and timing until ResumeTiming(). REQUIRES: inside the loop.
  void PauseTiming() { host_->pause(ctx_); }
  void ResumeTiming() { host_->resume(ctx_); }

  // Records the error in the results and ends the loop at its next check; the scenario should
  // leave the loop (or return) right after.
  void SkipWithError(const char* message) {
    error_occurred_ = true;
    host_->skip(ctx_, message);
  }
  bool error_occurred() const { return error_occurred_; }

  // Counts the calling thread's allocations as this scenario's own (otherwise a thread the
  // body starts is background). Call it first thing in that thread; it follows the scenario's
  // counting: on inside the measured loop, off outside it and while paused.
  void CountThisThread() { host_->count_this_thread(ctx_); }

  // Reports a value measured by the scenario itself (a memory floor, a set's size...) next to
  // its counts, under "counters" in the results. Recorded from the count pass only, so that it
  // is deterministic where the value is; with Threads(n), set it from thread_index() == 0.
  void SetCounter(const char* name, double value, const char* unit = "") {
    host_->set_counter(ctx_, name, value, unit);
  }

  // The process's footprint now: RSS and the allocator's own statistics. Reading is never
  // counted. Typical use, in setup: read, build the structure, read again, SetCounter(delta).
  Footprint ReadFootprint() {
    const internal::FootprintData d = host_->footprint(ctx_);
    return Footprint{d.rss_bytes, d.allocator_mapped_bytes, d.allocator_allocated_bytes};
  }

  // For allocbench-run.
  State(const internal::Host* host, void* ctx, const int64_t* args, std::size_t num_args,
        int threads, int thread_index)
      : host_(host),
        ctx_(ctx),
        args_(args),
        num_args_(num_args),
        threads_(threads),
        thread_index_(thread_index) {}
  bool loop_started() const { return started_; }
  bool loop_finished() const { return finished_; }

 private:
  bool NextBatch(int64_t* remaining) {
    if (finished_) return false;
    *remaining = host_->next(ctx_);
    if (*remaining == 0) finished_ = true;
    return *remaining != 0;
  }

  const internal::Host* host_;
  void* ctx_;
  const int64_t* args_;
  std::size_t num_args_;
  int threads_;
  int thread_index_;
  bool started_ = false;
  bool finished_ = false;
  bool error_occurred_ = false;
};

using Function = void (*)(State&);

// Keeps `value` (and what it points to) alive as far as the optimizer can tell.
template <class T>
inline __attribute__((always_inline)) void DoNotOptimize(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

template <class T>
inline __attribute__((always_inline)) void DoNotOptimize(T& value) {
#if defined(__clang__)
  asm volatile("" : "+r,m"(value) : : "memory");
#else
  if constexpr (std::is_trivially_copyable<T>::value && sizeof(T) <= sizeof(T*)) {
    asm volatile("" : "+m,r"(value) : : "memory");
  } else {
    asm volatile("" : "+m"(value) : : "memory");
  }
#endif
}

// Forces every pending write to memory to be treated as observed.
inline __attribute__((always_inline)) void ClobberMemory() {
  std::atomic_signal_fence(std::memory_order_acq_rel);
  asm volatile("" : : : "memory");
}

// Chained configuration, returned by ALLOCBENCH_REGISTER. Mirrors Google Benchmark's
// Benchmark class: each Args()/Arg() call adds one instance; each Threads() call adds a thread
// count that every instance runs with.
class Scenario {
 public:
  Scenario(std::string name, Function function) : name_(std::move(name)), function_(function) {}

  Scenario* Name(std::string name) {
    name_ = std::move(name);
    return this;
  }
  Scenario* Arg(int64_t value) { return Args({value}); }
  Scenario* Args(std::vector<int64_t> values) {
    arg_sets_.push_back(std::move(values));
    return this;
  }
  Scenario* ArgName(std::string name) { return ArgNames({std::move(name)}); }
  Scenario* ArgNames(std::vector<std::string> names) {
    arg_names_ = std::move(names);
    return this;
  }
  Scenario* Threads(int count) {
    threads_.push_back(count);
    return this;
  }
  // The count pass of this scenario: `warmup` ops (cold op included) then two windows of `ops`
  // ops per thread, instead of allocbench-run's defaults; for ops that are whole workloads
  // (e.g. initialising 7,500 metric contexts), where the defaults would take minutes.
  Scenario* CountOps(int64_t warmup, int64_t ops) {
    count_warmup_ = warmup;
    count_ops_ = ops;
    return this;
  }

  const std::string& name() const { return name_; }
  Function function() const { return function_; }
  const std::vector<std::vector<int64_t>>& arg_sets() const { return arg_sets_; }
  const std::vector<std::string>& arg_names() const { return arg_names_; }
  const std::vector<int>& threads() const { return threads_; }
  int64_t count_warmup() const { return count_warmup_; }
  int64_t count_ops() const { return count_ops_; }

 private:
  std::string name_;
  Function function_;
  std::vector<std::vector<int64_t>> arg_sets_;
  std::vector<std::string> arg_names_;
  std::vector<int> threads_;
  int64_t count_warmup_ = 0;  // 0: allocbench-run's default
  int64_t count_ops_ = 0;
};

namespace internal {

inline std::vector<std::unique_ptr<Scenario>>& Registry() {
  static std::vector<std::unique_ptr<Scenario>> registry;
  return registry;
}

inline Scenario* Register(const char* name, Function function) {
  Registry().push_back(std::make_unique<Scenario>(name, function));
  return Registry().back().get();
}

// The plugin boundary: plain data only, so that the harness reads it without sharing any
// library state with the plugin. `args` is num_arg_sets x num_args, row-major.
struct ScenarioDesc {
  const char* name;
  Function function;
  const int64_t* args;
  int32_t num_arg_sets;
  int32_t num_args;
  const char* const* arg_names;  // num_args entries, or nullptr
  const int32_t* threads;
  int32_t num_threads;   // 0: the scenario did not call Threads()
  int64_t count_warmup;  // 0: allocbench-run's default
  int64_t count_ops;
};

struct PluginDesc {
  const ScenarioDesc* scenarios;
  int32_t num_scenarios;
  const char* compiler;
  const char* build_flags;
  const char* error;  // non-null: the registrations are inconsistent; nothing else is valid
};

}  // namespace internal
}  // namespace ALLOCBENCH_PRIVATE_VISIBILITY

#define ALLOCBENCH_SCENARIO(function, state) static void function(::allocbench::State& state)

#define ALLOCBENCH_REGISTER(function)                                                             \
  static ::allocbench::Scenario* ALLOCBENCH_PRIVATE_CONCAT(allocbench_registration_, __COUNTER__) \
      __attribute__((unused)) = ::allocbench::internal::Register(#function, function)

#ifndef ALLOCBENCH_HOST
#include <allocbench/plugin_entry.h>
#endif

#endif  // ALLOCBENCH_SCENARIO_H_
