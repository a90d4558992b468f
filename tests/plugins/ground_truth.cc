// Scenarios whose exact per-op allocations are known by construction. The tests pin them.
#include <allocbench/scenario.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Block32 {
  char bytes[32];
};

// 3 x new of 32 B + malloc(100) + strdup of 9 chars (10 B) = 206 B in 5 allocations, all freed.
// DoNotOptimize on every pointer: GCC may otherwise delete new/delete and malloc/free pairs.
inline void GroundTruthOp() {
  Block32* a = new Block32;
  Block32* b = new Block32;
  Block32* c = new Block32;
  void* m = std::malloc(100);
  char* s = strdup("123456789");
  allocbench::DoNotOptimize(a);
  allocbench::DoNotOptimize(b);
  allocbench::DoNotOptimize(c);
  allocbench::DoNotOptimize(m);
  allocbench::DoNotOptimize(s);
  delete a;
  delete b;
  delete c;
  std::free(m);
  std::free(s);
}

ALLOCBENCH_SCENARIO(Mixed, state) {
  for (auto _ : state) GroundTruthOp();
}
ALLOCBENCH_REGISTER(Mixed)->Name("ground_truth/mixed");

// Setup, teardown and paused regions allocate plenty; none of it may be counted.
ALLOCBENCH_SCENARIO(SetupAndPause, state) {
  std::vector<std::string> setup(100, std::string(64, 's'));
  for (auto _ : state) {
    state.PauseTiming();
    void* paused = std::malloc(500);
    allocbench::DoNotOptimize(paused);
    std::free(paused);
    state.ResumeTiming();
    GroundTruthOp();
  }
  std::vector<std::string> teardown(100, std::string(64, 't'));
  allocbench::DoNotOptimize(teardown);
}
ALLOCBENCH_REGISTER(SetupAndPause)->Name("ground_truth/setup_and_pause");

// A thread the scenario did not make its own allocates all the time: background only.
ALLOCBENCH_SCENARIO(Background, state) {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> rounds{0};
  std::thread noise([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      void* p = std::malloc(64);
      allocbench::DoNotOptimize(p);
      std::free(p);
      rounds.fetch_add(1, std::memory_order_relaxed);
    }
  });
  for (auto _ : state) {
    // Every op overlaps at least one allocation of the noise thread, whatever the scheduler
    // does, so the windows certainly hold background allocations.
    const int64_t seen = rounds.load();
    GroundTruthOp();
    while (rounds.load() == seen) std::this_thread::yield();
  }
  stop = true;
  noise.join();
}
ALLOCBENCH_REGISTER(Background)->Name("ground_truth/background");

// Keeps everything it allocates: B/op depends on how many ops ran, so it is not steady.
ALLOCBENCH_SCENARIO(GrowingVector, state) {
  std::vector<int64_t> forever;
  for (auto _ : state) forever.push_back(static_cast<int64_t>(forever.size()));
  allocbench::DoNotOptimize(forever);
}
ALLOCBENCH_REGISTER(GrowingVector)->Name("ground_truth/growing_vector");

// Many threads at once, each op: new of 64 B and malloc(32) = 96 B in 2 allocations.
ALLOCBENCH_SCENARIO(Threaded, state) {
  for (auto _ : state) {
    Block32* a = new Block32[2];
    void* m = std::malloc(32);
    allocbench::DoNotOptimize(a);
    allocbench::DoNotOptimize(m);
    delete[] a;
    std::free(m);
  }
}
ALLOCBENCH_REGISTER(Threaded)->Name("ground_truth/threaded")->Threads(16);

// Exactly `bytes` in one allocation, by argument: a named argument in the instance name.
ALLOCBENCH_SCENARIO(Sized, state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    char* p = new char[bytes];
    allocbench::DoNotOptimize(p);
    delete[] p;
  }
}
ALLOCBENCH_REGISTER(Sized)->Name("ground_truth/sized")->ArgNames({"bytes"})->Args({24})->Args({96});

ALLOCBENCH_SCENARIO(Fails, state) {
  for (auto _ : state) {
    state.SkipWithError("the subject is not configured");
    break;
  }
}
ALLOCBENCH_REGISTER(Fails)->Name("ground_truth/fails");

// Dies mid-run when asked to, as a buggy scenario would: the run's earlier results must survive.
ALLOCBENCH_SCENARIO(CrashOnRequest, state) {
  const bool crash = std::getenv("ALLOCBENCH_TEST_CRASH") != nullptr;
  for (auto _ : state) {
    if (crash) std::abort();
  }
}
ALLOCBENCH_REGISTER(CrashOnRequest)->Name("ground_truth/crash_on_request");

}  // namespace
