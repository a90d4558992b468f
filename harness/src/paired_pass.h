// The paired time pass (allocbench-run --against): the base and the candidate build of one
// instance, each in a worker process of its own (paired_worker.h), run short batches in turn
// on this machine at the same time of day, so that drift, frequency changes and neighbours
// hit both sides of a pair alike and cancel in the pair's ratio (docs/paired.md).
//
// Per instance, `sessions` times over with fresh processes: both sides run their setup once and
// wait; the batch length (ops per thread) grows from 1 until a batch of either side lasts
// `batch_s` (in the first session; the others keep it); then pairs of batches, one per side in
// a random order (seeded by the instance's name), until the session's share of `budget_s` has
// passed; the pairs of the first `warmup_fraction` of it are dropped. Sessions, because a
// process brings a speed of its own (measured: the same build 1-2% apart in two processes, for
// a whole session, on allocating scenarios), which only fresh processes average out. Every pair's
// wall and CPU times go into the result entry's "paired" section: the estimate is the Python side's
// (gate/paired.py). A fault of either side (crash, exit, uncaught exception, SkipWithError) is the
// entry's error, naming the side; a hang is the isolation's time-out, as in the other passes.
#ifndef ALLOCBENCH_HARNESS_PAIRED_PASS_H_
#define ALLOCBENCH_HARNESS_PAIRED_PASS_H_

#include <nlohmann/json.hpp>
#include <string>

#include "plugin_loader.h"

namespace allocbench {

struct PairedOptions {
  std::string against;      // the candidate's plugin; empty: no paired pass
  double budget_s = 1.0;    // per instance, warm-up included
  int sessions = 10;        // fresh processes of both sides, each for budget_s / sessions
  double batch_s = 100e-6;  // the shortest batch of either side
  double warmup_fraction = 0.1;
  // A side silent this long (its setup, a batch or its teardown) hangs: the instance fails
  // naming it, before the isolation's --instance-timeout would kill it without a name.
  double hang_s = 540;
};

// The result entry of `instance` (name, scenario, args, threads, allocator) with its "paired"
// section, or with "error". REQUIRES: no other thread in this process (it forks).
nlohmann::json RunPaired(const Instance& instance, const std::string& base_plugin,
                         const PairedOptions& options, const std::string& allocator);

// The same entry without a measurement, for an instance whose pass never reported.
nlohmann::json PairedEntry(const Instance& instance, const std::string& allocator);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_PAIRED_PASS_H_
