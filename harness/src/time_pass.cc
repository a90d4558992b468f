#include "time_pass.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <numeric>

#include "footprint.h"

namespace allocbench {
namespace {

// Our loop drives Google Benchmark through KeepRunningBatch: the first call starts the timer
// and grants all max_iterations at once, the second stops it. The body's own loop then counts
// down exactly as it does in the count pass.
// Google Benchmark CHECK-fails (aborts) on a second loop or on pausing outside the loop; the
// context catches those uses first and turns them into the scenario's error.
struct TimeContext {
  benchmark::State* state;
  bool started = false;
  bool finished = false;
};

void Misuse(TimeContext* t, const char* what) {
  if (!t->state->error_occurred()) t->state->SkipWithError(what);
}

int64_t Next(void* ctx) {
  auto* t = static_cast<TimeContext*>(ctx);
  benchmark::State& st = *t->state;
  if (st.KeepRunningBatch(st.max_iterations)) return st.max_iterations;
  t->finished = true;
  return 0;
}
int64_t Start(void* ctx) {
  auto* t = static_cast<TimeContext*>(ctx);
  if (t->started) {
    Misuse(t, "the scenario body runs `for (auto _ : state)` more than once");
    return 0;
  }
  t->started = true;
  return Next(ctx);
}
void Pause(void* ctx) {
  auto* t = static_cast<TimeContext*>(ctx);
  if (!t->started || t->finished || t->state->error_occurred()) {
    return Misuse(t, "PauseTiming() outside the measured loop");
  }
  t->state->PauseTiming();
}
void Resume(void* ctx) {
  auto* t = static_cast<TimeContext*>(ctx);
  if (!t->started || t->finished || t->state->error_occurred()) {
    return Misuse(t, "ResumeTiming() outside the measured loop");
  }
  t->state->ResumeTiming();
}
void Skip(void* ctx, const char* message) {
  benchmark::State& st = *static_cast<TimeContext*>(ctx)->state;
  if (!st.error_occurred()) st.SkipWithError(message ? message : "SkipWithError() with no message");
}
// Counting is off in the time pass: adopting threads and counters have nothing to do.
void CountThisThread(void*) {}
void SetCounter(void*, const char*, double, const char*) {}
internal::FootprintData Footprint(void*) { return ReadProcessFootprint(); }
constexpr internal::Host kTimeHost = {&Start,           &Next,       &Pause,    &Resume, &Skip,
                                      &CountThisThread, &SetCounter, &Footprint};

void RunTimed(const Instance& instance, benchmark::State& st) {
  TimeContext ctx{&st};
  State state(&kTimeHost, &ctx, instance.arg_values.data(), instance.arg_values.size(),
              st.threads(), st.thread_index());
  // Thread 0 runs on Google Benchmark's calling thread: an exception of the scenario would
  // unwind into the harness and read as the harness's failure. Make it what it is on the
  // scenario's other threads (and in the count pass): uncaught, std::terminate().
  try {
    instance.function(state);
  } catch (...) {
    std::terminate();
  }
  // Google Benchmark aborts the process when a body returns mid-loop without an error.
  if (!st.error_occurred() && !state.loop_finished()) {
    st.SkipWithError(state.loop_started()
                         ? "the scenario left its measured loop early (break or return inside it)"
                         : "the scenario body has no `for (auto _ : state)` loop");
  }
}

class SampleCollector : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;
      if (run.error_occurred) {
        if (error.empty()) error = run.error_message;
        continue;
      }
      samples.push_back(run.GetAdjustedRealTime());
      cpu_samples.push_back(run.GetAdjustedCPUTime());
      iterations.push_back(run.iterations);
    }
  }
  std::vector<double> samples;      // Google Benchmark's ns per iteration (all threads)
  std::vector<double> cpu_samples;  // the same in CPU time of the timed threads
  std::vector<int64_t> iterations;
  std::string error;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

void InitializeTimePass(const char* argv0) {
  int argc = 1;
  char* argv[] = {const_cast<char*>(argv0), nullptr};
  benchmark::Initialize(&argc, argv);
}

void Summarize(TimeMetrics& m, int threads) {
  std::vector<double> sorted = m.samples_ns;
  if (sorted.empty()) return;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  m.median_ns = Median(sorted);
  m.median_cpu_ns = m.cpu_samples_ns.empty() ? 0.0 : Median(m.cpu_samples_ns);
  m.mean_ns = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  double sq = 0;
  for (double x : sorted) sq += (x - m.mean_ns) * (x - m.mean_ns);
  m.stddev_ns = n > 1 ? std::sqrt(sq / static_cast<double>(n - 1)) : 0.0;
  m.cv = m.mean_ns > 0 ? m.stddev_ns / m.mean_ns : 0.0;
  m.min_ns = sorted.front();
  m.max_ns = sorted.back();
  m.ops_per_s = m.median_ns > 0 ? 1e9 * threads / m.median_ns : 0.0;
}

TimeOutcome RunTimePass(const Instance& instance, const TimeOptions& options) {
  benchmark::ClearRegisteredBenchmarks();
  auto* b = benchmark::RegisterBenchmark(
      instance.name.c_str(), [&instance](benchmark::State& st) { RunTimed(instance, st); });
  b->Unit(benchmark::kNanosecond)
      ->UseRealTime()
      ->Threads(instance.threads)
      ->Repetitions(options.repetitions)
      ->MinTime(options.min_time_s);
  SampleCollector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();

  TimeOutcome outcome;
  outcome.error = collector.error;
  TimeMetrics& m = outcome.metrics;
  m.repetitions = options.repetitions;
  m.min_time_s = options.min_time_s;
  m.iterations = collector.iterations;
  // With n threads, Google Benchmark divides the mean per-thread wall time by the iterations of
  // all threads; multiply back so the sample is the wall time of one op on one thread.
  for (double t : collector.samples) m.samples_ns.push_back(t * instance.threads);
  // CPU time is summed over the threads, so over all threads' iterations it is already the
  // CPU time of one op on one thread.
  m.cpu_samples_ns = collector.cpu_samples;
  Summarize(m, instance.threads);
  return outcome;
}

}  // namespace allocbench
