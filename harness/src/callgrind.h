// The count pass under callgrind: the client requests that make callgrind collect exactly the
// count windows' ops, and the reading of what it collected (DESIGN.md, "Instructions").
//
// Collection is per thread in callgrind, so each scenario thread switches it where it switches
// counting inside the two windows: on in the measured loop, off when it pauses or reaches a
// boundary (never in the warm-up, whose costs would survive a ZERO_STATS: that clears the
// calling thread's costs only). At the end of each window the thread that takes the counting
// snapshot dumps callgrind's counters of all threads (which zeroes them), while every other
// scenario thread waits at the barrier with collection off. Outside valgrind every request is a
// no-op.
#ifndef ALLOCBENCH_HARNESS_CALLGRIND_H_
#define ALLOCBENCH_HARNESS_CALLGRIND_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace allocbench::callgrind {

// Whether this build has valgrind's client requests (valgrind/callgrind.h).
bool Available();
bool RunningOnValgrind();

// Switches callgrind's collection for the calling thread (it starts off: --collect-atstart=no).
void Collect(bool on);
// Writes a dump "allocbench window <window>" and zeroes the counters.
void DumpWindow(int window);

// The events of one dump: {"Ir": …} and, with --cache-sim=yes, Dr, Dw, I1mr, D1mr, D1mw, ILmr,
// DLmr, DLmw.
using Events = std::map<std::string, int64_t>;

// The totals of window `window` (1 or 2) that process `pid` dumped into a file
// `prefix`.<pid>.<n>, which is removed once read; nullopt and *error when there is none.
std::optional<Events> ReadWindow(const std::string& prefix, long pid, int window,
                                 std::string* error);

// iai-callgrind's model: L1 hits + 5 x LL hits + 35 x RAM accesses (accesses: Ir + Dr + Dw);
// nullopt without the cache simulation's events.
std::optional<int64_t> EstimatedCycles(const Events& events);

}  // namespace allocbench::callgrind

#endif  // ALLOCBENCH_HARNESS_CALLGRIND_H_
