// Plugins whose faults are in what runs around the scenarios, in allocbench-run's own process:
// a static destructor that crashes at exit (CRASH_AT_EXIT), a static constructor that throws
// (THROW_AT_LOAD) or changes the current folder (CHDIR_AT_LOAD). Each has one well-behaved
// scenario, 3 x new of 32 B = 96 B/op in 3 allocations.
#include <allocbench/scenario.h>
#include <unistd.h>

#include <stdexcept>

namespace {

struct Block32 {
  char bytes[32];
};

ALLOCBENCH_SCENARIO(ThreeBlocks, state) {
  for (auto _ : state) {
    Block32* a = new Block32;
    Block32* b = new Block32;
    Block32* c = new Block32;
    allocbench::DoNotOptimize(a);
    allocbench::DoNotOptimize(b);
    allocbench::DoNotOptimize(c);
    delete a;
    delete b;
    delete c;
  }
}

#if defined(CRASH_AT_EXIT)
// A singleton torn down at exit through a pointer that is gone.
struct Registry {
  ~Registry() {
    volatile int* p = nullptr;
    allocbench::DoNotOptimize(p);
    *p = 1;
  }
} registry;
#elif defined(THROW_AT_LOAD)
struct Agent {
  Agent() { throw std::runtime_error("the agent's socket is missing"); }
} agent;
#elif defined(CHDIR_AT_LOAD)
struct AgentThatMoves {
  AgentThatMoves() {
    if (chdir("/") != 0) throw std::runtime_error("chdir");
  }
} agent_that_moves;
#endif

}  // namespace

ALLOCBENCH_REGISTER(ThreeBlocks)->Name("process/three_blocks");
