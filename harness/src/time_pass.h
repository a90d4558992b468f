// The time pass: Google Benchmark times the instance's loop; every repetition is one sample.
//
// ns_per_op is per op per thread (wall time of a repetition / ops one thread did), the same
// "per op" as the count pass; ops_per_s is the throughput of all threads together;
// cpu_ns_per_op is the timed threads' CPU time per op per thread, which on a shared machine
// leaves out the waits for a core that make wall time noisy (docs/instructions.md, "Time itself").
// Counting stays off: Google Benchmark's threads are not the scenario's counted threads and no
// background window is open, so each allocation pays only the hooks' mode check.
#ifndef ALLOCBENCH_HARNESS_TIME_PASS_H_
#define ALLOCBENCH_HARNESS_TIME_PASS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plugin_loader.h"

namespace allocbench {

struct TimeOptions {
  int repetitions = 5;
  double min_time_s = 0.05;  // per repetition
};

struct TimeMetrics {
  int repetitions = 0;
  double min_time_s = 0;
  std::vector<double> samples_ns;      // ns per op per thread, one per repetition
  std::vector<double> cpu_samples_ns;  // the same in CPU time of the timed threads (info)
  std::vector<int64_t> iterations;     // ops of each repetition, all threads
  double median_ns = 0;
  double median_cpu_ns = 0;  // of cpu_samples_ns
  double mean_ns = 0;
  double stddev_ns = 0;  // sample standard deviation (n - 1)
  double cv = 0;         // stddev / mean
  double min_ns = 0;
  double max_ns = 0;
  double ops_per_s = 0;  // all threads, from the median
};

struct TimeOutcome {
  TimeMetrics metrics;
  std::string error;
};

// Call once per process before the first RunTimePass.
void InitializeTimePass(const char* argv0);

TimeOutcome RunTimePass(const Instance& instance, const TimeOptions& options);

// Exposed for tests: fills the summary statistics from samples_ns.
void Summarize(TimeMetrics& m, int threads);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_TIME_PASS_H_
