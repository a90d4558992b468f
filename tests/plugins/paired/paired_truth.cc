// Builds of the same scenarios whose per-op work is set at compile time, for the paired time
// pass (test_paired_pass.py): WORK iterations of a loop the optimizer must keep, so two builds
// differ by exactly the planted ratio of work (checked in Ir/op by test_paired_pass.py).
//   PAIRED_WORK     iterations per op [2000]
//   PAIRED_PAD      a second layout of the same work: its loop at other addresses
//   PAIRED_FAULTS   the fault scenarios fault in their loop (elsewhere they work as the others)
//   PAIRED_EXTRA    one more scenario, registered only by this build
#include <allocbench/scenario.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#ifndef PAIRED_WORK
#define PAIRED_WORK 2000
#endif

// From libpaired_subject.so, whose two builds share a soname (paired_subject.cc).
extern "C" int paired_subject_work();

namespace {

// A dependency chain (multiply-add, ~4 cycles an iteration): bound by latency, so its speed does
// not depend on where the loop lands. A one-cycle loop did: one build of this file ran it at 2
// cycles an iteration for 10% more instructions (docs/paired.md, "Code layout").
__attribute__((noinline, aligned(64))) uint64_t Chain(long n) {
  uint64_t x = 1;
#ifdef PAIRED_PAD  // the loop 26 bytes further on, for one jump more per call
  asm volatile("jmp 1f\n.skip 24, 0x90\n1:");
#endif
  for (long i = 0; i < n; ++i) {
    x = x * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i);
    asm volatile("" : "+r"(x));
  }
  return x;
}

void Work(long n) {
  uint64_t x = Chain(n);
  allocbench::DoNotOptimize(x);
}

ALLOCBENCH_SCENARIO(PlainWork, state) {
  for (auto _ : state) Work(PAIRED_WORK);
}
ALLOCBENCH_REGISTER(PlainWork)->Name("paired/work");
ALLOCBENCH_REGISTER(PlainWork)->Name("paired/work_threads")->Threads(2);

// 4 x 32 B per op besides the work: both heaps are the sides' own.
ALLOCBENCH_SCENARIO(AllocatingWork, state) {
  for (auto _ : state) {
    for (int i = 0; i < 4; ++i) {
      char* p = new char[32];
      allocbench::DoNotOptimize(p);
      delete[] p;
    }
    Work(PAIRED_WORK / 4);
  }
}
ALLOCBENCH_REGISTER(AllocatingWork)->Name("paired/alloc");

// Ten times the work, nine tenths of it paused: only the tenth outside the pause is timed.
ALLOCBENCH_SCENARIO(PausedWork, state) {
  for (auto _ : state) {
    state.PauseTiming();
    Work(9 * PAIRED_WORK);
    state.ResumeTiming();
    Work(PAIRED_WORK);
  }
}
ALLOCBENCH_REGISTER(PausedWork)->Name("paired/paused");

// Each of its threads runs on one CPU of its own, in the paired pass (where there are as many):
// both sides' threads share the CPUs, thread i with thread i.
std::atomic<int> g_pinned_cpu[2] = {-1, -1};

ALLOCBENCH_SCENARIO(Pinned, state) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) {
    state.SkipWithError("this thread may run on more than one CPU");
    return;
  }
  int cpu = 0;
  while (!CPU_ISSET(cpu, &set)) ++cpu;
  const int i = state.thread_index();
  if (state.threads() == 2 && std::thread::hardware_concurrency() >= 2) {
    g_pinned_cpu[i] = cpu;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (g_pinned_cpu[1 - i] < 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    if (g_pinned_cpu[1 - i] == cpu) {
      state.SkipWithError("both threads run on one CPU");
      return;
    }
  }
  for (auto _ : state) Work(PAIRED_WORK);
}
ALLOCBENCH_REGISTER(Pinned)->Name("paired/pinned")->Threads(1)->Threads(2);

// The work of the shared library both builds link under one soname.
ALLOCBENCH_SCENARIO(SubjectWork, state) {
  const long n = paired_subject_work();
  for (auto _ : state) Work(n);
}
ALLOCBENCH_REGISTER(SubjectWork)->Name("paired/subject");

#ifdef PAIRED_FAULTS
constexpr bool kFaults = true;
#else
constexpr bool kFaults = false;
#endif

// Faults after 300 ops: past the batch length's search (each side's first ~130 ops) and in the
// first session, whatever the machine's load: in the middle of the pass, not in its setup.
template <class Fault>
void WorkThenFault(allocbench::State& state, Fault fault) {
  long ops = 0;
  for (auto _ : state) {
    Work(PAIRED_WORK);
    if (kFaults && ++ops == 300) fault(state);
  }
}

ALLOCBENCH_SCENARIO(Segfault, state) {
  WorkThenFault(state, [](allocbench::State&) {
    volatile int* p = nullptr;
    *p = 1;
  });
}
ALLOCBENCH_REGISTER(Segfault)->Name("paired/fault/segfault");

ALLOCBENCH_SCENARIO(Throw, state) {
  WorkThenFault(state,
                [](allocbench::State&) { throw std::runtime_error("the span pool is empty"); });
}
ALLOCBENCH_REGISTER(Throw)->Name("paired/fault/throw");

ALLOCBENCH_SCENARIO(Exit, state) {
  WorkThenFault(state, [](allocbench::State&) { std::exit(0); });
}
ALLOCBENCH_REGISTER(Exit)->Name("paired/fault/exit");

ALLOCBENCH_SCENARIO(Skip, state) {
  WorkThenFault(state, [](allocbench::State& s) { s.SkipWithError("the exporter is gone"); });
}
ALLOCBENCH_REGISTER(Skip)->Name("paired/fault/skip");

ALLOCBENCH_SCENARIO(Hang, state) {
  WorkThenFault(state, [](allocbench::State&) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  });
}
ALLOCBENCH_REGISTER(Hang)->Name("paired/fault/hang");

#ifdef PAIRED_EXTRA
ALLOCBENCH_SCENARIO(Extra, state) {
  for (auto _ : state) Work(PAIRED_WORK);
}
ALLOCBENCH_REGISTER(Extra)->Name("paired/only_in_this_build");
#endif

}  // namespace
