// One side of the paired time pass (paired_pass.h): a process of its own that loads one
// plugin, runs one instance's setup once and then times the batches the coordinator asks for
// through its slot of the shared page (paired_channel.h).
//
// Its own process, not a second plugin in the coordinator's: each side has its own heap, its
// own counters and its own copy of every shared library its plugin loads (two builds of a
// subject that both link libtracer.so.1 would otherwise run one of them twice).
//
// A batch is timed from the release of the instance's threads to the arrival of the last one
// (wall), and by the timed threads' own CPU clocks (CPU); PauseTiming()/ResumeTiming()
// intervals are taken out of both (of wall, their mean over the threads). A fault of the
// scenario (SkipWithError, a misuse of the loop, an uncaught exception) is written to the slot
// before the worker goes; a crash or exit is what the coordinator sees of its child.
#ifndef ALLOCBENCH_HARNESS_PAIRED_WORKER_H_
#define ALLOCBENCH_HARNESS_PAIRED_WORKER_H_

#include <string>
#include <vector>

#include "paired_channel.h"

namespace allocbench {

// The CPUs the sides' threads run on: thread i of either side on cpus[i % size]. Both sides on
// the same CPUs: on a shared machine one CPU is often busier than another for seconds, which
// a side that stayed on it would pay alone (measured: A/A differences of 2-4% unpinned).
struct PairedCpus {
  std::vector<int> cpus;  // empty: not pinned
};

// In a freshly forked child: loads `plugin`, runs its instance named `instance` for the
// coordinator, and ends the process (status 0 once the body returned after the last batch).
[[noreturn]] void PairedWorkerMain(const std::string& plugin, const std::string& instance,
                                   const PairedCpus& cpus, PairedSlot* slot);

// Pins the calling thread to `cpu` (no effect if it cannot be).
void PinThisThread(int cpu);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_PAIRED_WORKER_H_
