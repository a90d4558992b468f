#include "count_pass.h"

#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>
#include <vector>

#include "barrier.h"
#include "callgrind.h"
#include "footprint.h"
#include "text.h"

namespace allocbench {
namespace {

using counting::Counters;
using counting::Mode;
using counting::Snapshot;

// Boundaries between the segments [cold op][rest of warm-up][window 1][window 2].
constexpr int kWindow1Start = 2;
constexpr int kLastBoundary = 4;

Counters Minus(const Counters& a, const Counters& b) {
  return {a.allocs - b.allocs, a.frees - b.frees, a.requested_bytes - b.requested_bytes,
          a.usable_bytes - b.usable_bytes};
}

class CountRun {
 public:
  CountRun(const Instance& instance, const CountOptions& options)
      : instance_(instance),
        barrier_(instance.threads),
        callgrind_(options.callgrind),
        segments_{1, options.warmup - 1, options.ops, options.ops} {}

  static CountOptions Effective(const Instance& instance, const CountOptions& options) {
    if (instance.count_ops == 0 || options.force) return options;
    return {instance.count_warmup, instance.count_ops, false, options.callgrind};
  }

  CountOutcome Run();

 private:
  struct ThreadContext {
    CountRun* run;
    int next_boundary = 0;
    bool user_paused = false;
    // Whether the owner thread is counting (collecting) now, for threads it starts
    // (CountThisThread).
    std::atomic<bool> counting{false};
    std::atomic<bool> collecting{false};
    bool InLoop() const { return next_boundary > 0 && next_boundary <= kLastBoundary; }
    bool InWindow() const { return next_boundary > kWindow1Start && InLoop(); }
  };

  // Callgrind collects only inside the windows: the warm-up leaves no cost behind (its
  // ZERO_STATS would clear the calling thread's costs only).
  static void SetCounting(ThreadContext* t, bool on) {
    t->counting.store(on, std::memory_order_relaxed);
    counting::SetMode(on ? Mode::kCounting : Mode::kPaused);
    if (t->run->callgrind_) {
      const bool collect = on && t->InWindow();
      t->collecting.store(collect, std::memory_order_relaxed);
      callgrind::Collect(collect);
    }
  }
  // Counting and callgrind's collection off, first thing when the harness takes over.
  static void Off(ThreadContext* t) {
    counting::SetMode(Mode::kPaused);
    if (t->run->callgrind_) {
      callgrind::Collect(false);
      t->collecting.store(false, std::memory_order_relaxed);
    }
  }

  static int64_t Start(void* ctx) {
    auto* t = static_cast<ThreadContext*>(ctx);
    Off(t);
    if (t->next_boundary > 0) {  // the body's second (or nested) loop
      t->run->Fail(
          "the scenario body runs `for (auto _ : state)` more than once; give it exactly one "
          "measured loop (split the work into two scenarios)");
      return 0;
    }
    return t->run->Cross(t);
  }
  static int64_t Next(void* ctx) {
    auto* t = static_cast<ThreadContext*>(ctx);
    Off(t);  // first: nothing the harness does below is counted
    t->counting.store(false, std::memory_order_relaxed);
    return t->run->Cross(t);
  }
  static void Pause(void* ctx) {
    auto* t = static_cast<ThreadContext*>(ctx);
    if (!t->InLoop()) return t->run->Fail("PauseTiming() outside the measured loop");
    SetCounting(t, false);
    t->user_paused = true;
  }
  static void Resume(void* ctx) {
    auto* t = static_cast<ThreadContext*>(ctx);
    if (!t->InLoop()) return t->run->Fail("ResumeTiming() outside the measured loop");
    t->user_paused = false;
    SetCounting(t, true);
  }
  // Runs on a thread the scenario started: it counts when its starter counts.
  static void CountThisThread(void* ctx) {
    auto* t = static_cast<ThreadContext*>(ctx);
    const bool on = t->counting.load(std::memory_order_relaxed);
    counting::SetMode(on ? Mode::kCounting : Mode::kPaused);
    if (t->run->callgrind_) callgrind::Collect(t->collecting.load(std::memory_order_relaxed));
  }
  static void SetCounter(void* ctx, const char* name, double value, const char* unit) {
    const Mode mode = counting::GetMode();
    counting::SetMode(Mode::kPaused);
    static_cast<ThreadContext*>(ctx)->run->Record(name, value, unit ? unit : "");
    counting::SetMode(mode);
  }
  static internal::FootprintData Footprint(void*) {
    const Mode mode = counting::GetMode();
    counting::SetMode(Mode::kPaused);
    const internal::FootprintData data = ReadProcessFootprint();
    counting::SetMode(mode);
    return data;
  }
  static void Skip(void* ctx, const char* message) {
    const Mode mode = counting::GetMode();
    counting::SetMode(Mode::kPaused);
    static_cast<ThreadContext*>(ctx)->run->Fail(message ? message : "");
    counting::SetMode(mode);
  }
  static constexpr internal::Host kHost = {&Start,           &Next,       &Pause,    &Resume, &Skip,
                                           &CountThisThread, &SetCounter, &Footprint};

  // Crosses boundaries until the next non-empty segment (returns its size, counting on) or the
  // end of the pass (returns 0, counting off).
  int64_t Cross(ThreadContext* t) {
    for (;;) {
      const int b = t->next_boundary++;
      if (!Synchronize(b) || b == kLastBoundary) return 0;
      if (segments_[b] > 0) {
        if (!t->user_paused) SetCounting(t, true);
        return segments_[b];
      }
    }
  }

  // Every thread arrives; the last one takes the snapshot; nobody resumes before it is taken.
  bool Synchronize(int boundary) {
    bool last = false;
    if (!barrier_.Wait(&last)) return false;
    if (last) {
      if (boundary == 0) counting::ResetLive();
      if (boundary == kLastBoundary) counting::SetBackgroundWindow(false);
      snapshots_[boundary] = counting::Read();
      live_[boundary] = counting::LiveBytes();
      if (boundary == kLastBoundary) peak_live_ = counting::PeakLiveBytes();
      if (boundary == kWindow1Start) counting::SetBackgroundWindow(true);
      // Every scenario thread waits here with collection off: the dump holds all their costs.
      if (callgrind_ && boundary > kWindow1Start) callgrind::DumpWindow(boundary - kWindow1Start);
    }
    return barrier_.Wait(nullptr);
  }

  void Fail(const std::string& message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (error_.empty()) error_ = message.empty() ? "SkipWithError() with no message" : message;
    }
    barrier_.Abort();
  }

  // Counters reach JSON (no NaN there) and every table: a bad one fails the scenario.
  void Record(const char* name, double value, const char* unit) {
    if (name == nullptr) return Fail("SetCounter() with a NULL name");
    if (const std::string problem = PrintableProblem(name); !problem.empty()) {
      return Fail("SetCounter(\"" + Escaped(name) + "\", ...): the name " + problem);
    }
    if (!std::isfinite(value)) {
      return Fail("SetCounter(\"" + std::string(name) + "\", " + std::to_string(value) +
                  "): the value is not a finite number");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (Counter& c : counters_) {
      if (c.name == name) {
        c.value = value;
        c.unit = unit;
        return;
      }
    }
    counters_.push_back({name, value, unit});
  }

  void RunThread(ThreadContext* t, int thread_index);
  AllocMetrics Metrics() const;

  const Instance& instance_;
  Barrier barrier_;
  const bool callgrind_;
  const int64_t segments_[kLastBoundary];
  Snapshot snapshots_[kLastBoundary + 1];
  int64_t live_[kLastBoundary + 1] = {};  // live usable bytes of the scenario at each boundary
  int64_t peak_live_ = 0;
  std::mutex mutex_;
  std::string error_;
  std::vector<Counter> counters_;
};

void CountRun::RunThread(ThreadContext* t, int thread_index) {
  counting::SetMode(Mode::kPaused);
  State state(&kHost, t, instance_.arg_values.data(), instance_.arg_values.size(),
              instance_.threads, thread_index);
  instance_.function(state);
  Off(t);
  if (!state.loop_started() && !state.error_occurred()) {
    Fail("the scenario body has no `for (auto _ : state)` loop");
  } else if (!state.loop_finished() && !state.error_occurred()) {
    Fail(
        "the scenario left its measured loop early (break or return inside it); let the loop "
        "run to its end, or call state.SkipWithError() first");
  }
}

CountOutcome CountRun::Run() {
  std::vector<ThreadContext> contexts(instance_.threads);
  for (ThreadContext& t : contexts) t.run = this;
  std::vector<std::thread> threads;
  threads.reserve(instance_.threads);
  // Every instance runs on fresh threads, so thread-local caches start cold whatever ran before.
  for (int i = 0; i < instance_.threads; ++i) {
    threads.emplace_back([this, &contexts, i] { RunThread(&contexts[i], i); });
  }
  for (auto& thread : threads) thread.join();
  counting::SetBackgroundWindow(false);

  CountOutcome outcome;
  outcome.error = error_;
  outcome.counters = counters_;
  if (outcome.error.empty()) outcome.metrics = Metrics();
  return outcome;
}

AllocMetrics CountRun::Metrics() const {
  AllocMetrics m;
  m.warmup_ops = segments_[0] + segments_[1];
  m.window_ops = segments_[2];
  const double threads = instance_.threads;
  const double window_ops = 2.0 * static_cast<double>(m.window_ops) * threads;
  m.windows[0] = Minus(snapshots_[3].scenario, snapshots_[2].scenario);
  m.windows[1] = Minus(snapshots_[4].scenario, snapshots_[3].scenario);
  const Counters both = Minus(snapshots_[4].scenario, snapshots_[2].scenario);
  m.bytes_per_op = static_cast<double>(both.requested_bytes) / window_ops;
  m.allocs_per_op = static_cast<double>(both.allocs) / window_ops;
  m.frees_per_op = static_cast<double>(both.frees) / window_ops;
  m.usable_bytes_per_op = static_cast<double>(both.usable_bytes) / window_ops;
  const Counters first = Minus(snapshots_[1].scenario, snapshots_[0].scenario);
  m.first_op_bytes = static_cast<double>(first.requested_bytes) / threads;
  m.first_op_allocs = static_cast<double>(first.allocs) / threads;
  const Counters background = Minus(snapshots_[4].background, snapshots_[2].background);
  m.background_bytes_per_op = static_cast<double>(background.requested_bytes) / window_ops;
  m.background_allocs_per_op = static_cast<double>(background.allocs) / window_ops;
  m.peak_live_bytes = peak_live_;
  // Usable bytes the scenario kept (allocated minus freed) over the two windows.
  const int64_t window_growth = live_[kLastBoundary] - live_[kWindow1Start];

  const Counters& w1 = m.windows[0];
  const Counters& w2 = m.windows[1];
  m.steady = w1.requested_bytes == w2.requested_bytes && w1.allocs == w2.allocs;
  if (!m.steady) {
    const auto window = [](const Counters& w) {
      return std::to_string(w.requested_bytes) + " B in " + std::to_string(w.allocs) + " allocs";
    };
    const std::string windows = "window 1: " + window(w1) + ", window 2: " + window(w2);
    if (window_growth > 0) {
      m.steady_reason = "amortized growth: live memory grew by " + std::to_string(window_growth) +
                        " B over the two windows (" + windows +
                        "); the op keeps what it allocates, so B/op depends on the op count";
    } else {
      m.steady_reason = "nondeterministic: the two windows differ (" + windows +
                        ") with no net growth of live memory";
    }
  }
  return m;
}

}  // namespace

CountOutcome RunCountPass(const Instance& instance, const CountOptions& options) {
  CountRun run(instance, CountRun::Effective(instance, options));
  return run.Run();
}

}  // namespace allocbench
