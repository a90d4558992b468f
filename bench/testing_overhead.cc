// What an allocbench::testing check costs over its bare statement, in the same executable (the
// hooks are linked either way, as in a test binary): bench/testing_overhead.py runs it and
// renders the table of docs/testing.md.
//
// Two statements of about 1 us of work each: one that allocates nothing, one that also makes 5
// allocations (3 x 32 B, 100 B, 10 B) and frees them. Each is timed bare, inside Count(), and
// inside the check a macro runs (internal::Check: the GoogleTest and Catch2 macros add only an
// `if` on its verdict), passing. BM_CapturingRun times a run that keeps the stacks, and
// BM_FailingCheck a failing exact check end to end: the second run with stack capture, addr2line
// and the message.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <string.h>

#include <cstdint>

#include "allocbench/testing.h"

namespace {

namespace at = allocbench::testing;
namespace ai = allocbench::testing::internal;

unsigned char g_data[1536];

// About 1 us: an FNV-1a hash over g_data, the compiler kept from folding it.
__attribute__((noinline)) uint64_t Work() {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char byte : g_data) {
    hash = (hash ^ byte) * 1099511628211ull;
    benchmark::DoNotOptimize(hash);
  }
  return hash;
}

__attribute__((noinline)) void Quiet() { benchmark::DoNotOptimize(Work()); }

__attribute__((noinline)) void Allocating() {
  void* a = ::operator new(32);
  void* b = ::operator new(32);
  void* c = ::operator new(32);
  void* m = malloc(100);
  char* s = strdup("123456789");
  benchmark::DoNotOptimize(Work());
  benchmark::DoNotOptimize(a), benchmark::DoNotOptimize(b), benchmark::DoNotOptimize(c);
  benchmark::DoNotOptimize(m), benchmark::DoNotOptimize(s);
  ::operator delete(a);
  ::operator delete(b);
  ::operator delete(c);
  free(m);
  free(s);
}

void (*const kStatements[])() = {&Quiet, &Allocating};
const char* const kNames[] = {"quiet", "allocating"};

// range(0): 0 = Quiet (0 allocations), 1 = Allocating (5 allocations, 206 B).
void BM_Bare(benchmark::State& state) {
  void (*statement)() = kStatements[state.range(0)];
  for (auto _ : state) statement();
  state.SetLabel(kNames[state.range(0)]);
}

void BM_Count(benchmark::State& state) {
  void (*statement)() = kStatements[state.range(0)];
  for (auto _ : state) benchmark::DoNotOptimize(at::Count(statement));
  state.SetLabel(kNames[state.range(0)]);
}

void BM_PassingCheck(benchmark::State& state) {
  void (*statement)() = kStatements[state.range(0)];
  // Quiet: NO_ALLOC (its first run captures stacks, of nothing); Allocating: exactly 5, 206 B.
  const ai::Expectation expectation = state.range(0) == 0
                                          ? ai::Expectation{ai::Kind::kNoAlloc, 0, 0}
                                          : ai::Expectation{ai::Kind::kExactly, 5, 206};
  for (auto _ : state) {
    const ai::Verdict verdict = ai::Check(expectation, "CHECK", "statement", statement);
    if (!verdict) state.SkipWithError(verdict.message().c_str());
  }
  state.SetLabel(kNames[state.range(0)]);
}

void BM_FailingCheck(benchmark::State& state) {
  const ai::Expectation wrong{ai::Kind::kExactly, 4, 206};
  for (auto _ : state) {
    const ai::Verdict verdict = ai::Check(wrong, "CHECK", "statement", &Allocating);
    if (verdict) state.SkipWithError("the check passed");
  }
  state.SetLabel("allocating");
}

// The capturing run alone (a Window that keeps stacks, as a failing check's second run): what
// capturing costs per allocation, apart from symbolising.
void BM_CapturingRun(benchmark::State& state) {
  for (auto _ : state) {
    ai::Window window(at::Threads::kThisThread, ai::Detail::kStacks);
    Allocating();
    benchmark::DoNotOptimize(window.Close());
  }
  state.SetLabel("allocating");
}

BENCHMARK(BM_Bare)->Arg(0)->Arg(1);
BENCHMARK(BM_CapturingRun);
BENCHMARK(BM_Count)->Arg(0)->Arg(1);
BENCHMARK(BM_PassingCheck)->Arg(0)->Arg(1);
BENCHMARK(BM_FailingCheck)->Iterations(20)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
