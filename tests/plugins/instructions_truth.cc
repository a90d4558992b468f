// Scenarios whose instructions per op differ by amounts known by construction: an x86-64 loop
// of exactly 3 instructions per iteration (add, sub, jnz), run `loops` times per op. Only
// differences are known (the loop's entry and the harness's per-op calls cost a constant), so
// the tests pin differences: 3 x the difference of `loops`, and 0 for work that must not count.
#include <allocbench/scenario.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <thread>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

namespace {

// Exactly 3 x n instructions for n >= 1 (plus the moves around it, the same for every n).
inline void Spin(int64_t n) {
#if defined(__x86_64__)
  if (n <= 0) return;
  uint64_t x = 0;
  asm volatile(
      "1:\n\t"
      "addq $1, %[x]\n\t"
      "subq $1, %[n]\n\t"
      "jnz 1b"
      : [x] "+r"(x), [n] "+r"(n)
      :
      : "cc");
#else
  allocbench::DoNotOptimize(n);
#endif
}

// loops: per op; paused: between PauseTiming and ResumeTiming in every op (never counted);
// setup: before the measured loop (never counted).
ALLOCBENCH_SCENARIO(Work, state) {
  Spin(state.range(2));
  for (auto _ : state) {
    Spin(state.range(0));
    state.PauseTiming();
    Spin(state.range(1));
    state.ResumeTiming();
  }
}
ALLOCBENCH_REGISTER(Work)
    ->Name("instructions_truth/work")
    ->ArgNames({"loops", "paused", "setup"})
    ->Args({10, 0, 0})
    ->Args({1000, 0, 0})
    ->Args({1000, 5000, 0})
    ->Args({1000, 0, 1000000});

// The same op on two threads at once: per op per thread, the same instructions.
ALLOCBENCH_REGISTER(Work)
    ->Name("instructions_truth/work_threads")
    ->ArgNames({"loops", "paused", "setup"})
    ->Args({1000, 0, 0})
    ->Threads(2);

// A thread the scenario starts but does not count: its work is not the op's.
ALLOCBENCH_SCENARIO(Helper, state) {
  for (auto _ : state) {
    std::thread helper([] { Spin(10000); });
    helper.join();
  }
}
ALLOCBENCH_REGISTER(Helper)->Name("instructions_truth/uncounted_helper");

// Each op spins one iteration more than the op before it: the second count window executes
// more instructions than the first, by construction (not steady).
ALLOCBENCH_SCENARIO(Growing, state) {
  int64_t loops = 0;
  for (auto _ : state) Spin(++loops);
}
ALLOCBENCH_REGISTER(Growing)->Name("instructions_truth/growing");

// The same every op, but 3 x (1 + pid % 1000) instructions: each process differs from the
// others (not repeatable across processes), by construction.
ALLOCBENCH_SCENARIO(PerProcess, state) {
  const int64_t loops = 1 + getpid() % 1000;
  for (auto _ : state) Spin(loops);
}
ALLOCBENCH_REGISTER(PerProcess)->Name("instructions_truth/per_process");

// Faults of the instructions pass alone: fine natively, they hang or crash under valgrind.
ALLOCBENCH_SCENARIO(HangsUnderValgrind, state) {
  for (auto _ : state) {
    if (RUNNING_ON_VALGRIND) sleep(600);
  }
}
ALLOCBENCH_REGISTER(HangsUnderValgrind)->Name("instructions_truth/fault/hangs_under_valgrind");

ALLOCBENCH_SCENARIO(CrashesUnderValgrind, state) {
  for (auto _ : state) {
    if (RUNNING_ON_VALGRIND) std::abort();
  }
}
ALLOCBENCH_REGISTER(CrashesUnderValgrind)->Name("instructions_truth/fault/crashes_under_valgrind");

// Faults that strike in the instructions pass alone, after the native passes measured 40 B/op
// in 1 allocation: each ends the process under valgrind, in its own way.
void Forty() {
  char* p = new char[40];
  allocbench::DoNotOptimize(p);
  delete[] p;
}

#define VALGRIND_FAULT(function, name, fault) \
  ALLOCBENCH_SCENARIO(function, state) {      \
    for (auto _ : state) {                    \
      Forty();                                \
      if (RUNNING_ON_VALGRIND) fault;         \
    }                                         \
  }                                           \
  ALLOCBENCH_REGISTER(function)->Name("instructions_truth/fault/" name "_under_valgrind");

// Measured alone under valgrind by a filter of its name: every character a regex gives a
// meaning to, escaped.
ALLOCBENCH_SCENARIO(Plain, state) {
  for (auto _ : state) Forty();
}
ALLOCBENCH_REGISTER(Plain)->Name("instructions_truth/regex (a+b)*[c]{2}|d$^.?\\");

VALGRIND_FAULT(ExitsUnderValgrind, "exits", std::exit(0))
VALGRIND_FAULT(UnderscoreExitsUnderValgrind, "_exits", _exit(3))
VALGRIND_FAULT(RaisesUnderValgrind, "raises_sigterm", std::raise(SIGTERM))

}  // namespace
