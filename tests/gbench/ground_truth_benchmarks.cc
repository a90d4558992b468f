// Google Benchmark benchmarks whose allocations per op are known from their source. Plain user
// code: nothing here knows of allocbench. Built twice (tests/gbench/CMakeLists.txt): linked with
// allocbench::gbench (gbench_ground_truth), and with Google Benchmark's own MemoryManager
// (gbench_memory_manager, memory_manager_main.cc) to show what that reports for the same code.
//
// The sizes in the comments are what tests/python/test_gbench_dropin.py expects, per op per
// thread. Every pointer escapes through DoNotOptimize so that no allocation can be elided.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

namespace {

// 3 x operator new(32): 96 B/op, 3 allocs/op.
void BM_ThreeNew32(benchmark::State& state) {
  for (auto _ : state) {
    void* a = ::operator new(32);
    void* b = ::operator new(32);
    void* c = ::operator new(32);
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
    benchmark::DoNotOptimize(c);
    ::operator delete(c, 32);
    ::operator delete(b, 32);
    ::operator delete(a, 32);
  }
}
BENCHMARK(BM_ThreeNew32);

// A 1 MiB setup allocation before the loop, kept through it, and a 1000-byte teardown
// allocation after it; the loop itself allocates 8 bytes: 8 B/op, 1 alloc/op.
void BM_SetupTeardown(benchmark::State& state) {
  void* setup = malloc(1 << 20);
  memset(setup, 1, 1 << 20);
  benchmark::DoNotOptimize(setup);
  for (auto _ : state) {
    void* p = ::operator new(8);
    benchmark::DoNotOptimize(p);
    ::operator delete(p, 8);
  }
  void* teardown = ::operator new(1000);
  benchmark::DoNotOptimize(teardown);
  ::operator delete(teardown, 1000);
  free(setup);
}
BENCHMARK(BM_SetupTeardown);

// 4096 bytes allocated while paused (excluded), then 24 bytes timed: 24 B/op, 1 alloc/op.
void BM_PauseResume(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    void* paused = ::operator new(4096);
    benchmark::DoNotOptimize(paused);
    state.ResumeTiming();
    void* timed = ::operator new(24);
    benchmark::DoNotOptimize(timed);
    ::operator delete(timed, 24);
    state.PauseTiming();
    ::operator delete(paused, 4096);
    state.ResumeTiming();
  }
}
BENCHMARK(BM_PauseResume);

// malloc(10) + calloc(3, 7) + realloc to 100 (one free and one allocation of 100)
// + aligned_alloc(32, 64) + operator new(48, align 64) + new int[5] (20 bytes):
// 10 + 21 + 100 + 64 + 48 + 20 = 263 B/op, 6 allocs/op.
void BM_MallocFamily(benchmark::State& state) {
  for (auto _ : state) {
    void* m = malloc(10);
    benchmark::DoNotOptimize(m);
    void* c = calloc(3, 7);
    benchmark::DoNotOptimize(c);
    m = realloc(m, 100);
    benchmark::DoNotOptimize(m);
    void* a = aligned_alloc(32, 64);
    benchmark::DoNotOptimize(a);
    void* n = ::operator new (48, std::align_val_t{64});
    benchmark::DoNotOptimize(n);
    int* v = new int[5];
    benchmark::DoNotOptimize(v);
    delete[] v;
    ::operator delete (n, std::align_val_t{64});
    free(a);
    free(c);
    free(m);
  }
}
BENCHMARK(BM_MallocFamily);

// Thread i allocates 16 * (i + 1) bytes per op: with T threads, 16 * T(T+1)/2 bytes per op of
// all threads together, i.e. 8 * (T + 1) per op per thread: Threads(2) 24 B/op,
// Threads(4) 40 B/op; 1 alloc/op either way.
void BM_PerThread(benchmark::State& state) {
  const size_t size = 16 * static_cast<size_t>(state.thread_index() + 1);
  for (auto _ : state) {
    void* p = ::operator new(size);
    benchmark::DoNotOptimize(p);
    ::operator delete(p, size);
  }
}
BENCHMARK(BM_PerThread)->Threads(2)->Threads(4);

// One 40-byte std::vector<char> per op, three repetitions: 40 B/op, 1 alloc/op in each.
void BM_Repeated(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<char> v(40);
    benchmark::DoNotOptimize(v.data());
  }
}
BENCHMARK(BM_Repeated)->Repetitions(3);

// One 64-byte block per batch of 8 ops: 8 B/op, 0.125 allocs/op (the batch API reports whole
// batches, so the iterations are a multiple of 8).
void BM_OneIn8(benchmark::State& state) {
  while (state.KeepRunningBatch(8)) {
    void* p = malloc(64);
    benchmark::DoNotOptimize(p);
    free(p);
  }
}
BENCHMARK(BM_OneIn8);

// No allocation: 0 B/op, 0 allocs/op.
void BM_NoAlloc(benchmark::State& state) {
  uint64_t x = 0;
  for (auto _ : state) benchmark::DoNotOptimize(x += 3);
}
BENCHMARK(BM_NoAlloc);

}  // namespace
