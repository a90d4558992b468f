// Functions whose allocations are known from their source alone: the tests of
// allocbench::testing derive every expected count from the sizes written here.
#ifndef ALLOCBENCH_TESTS_TESTING_GROUND_TRUTH_H_
#define ALLOCBENCH_TESTS_TESTING_GROUND_TRUTH_H_

#include <cstddef>

namespace ground_truth {

// 3 x new of 32 B, malloc(100), strdup of a 9-character string (10 B): 5 allocations, 206 B,
// all freed again (5 frees).
void FiveAllocations();
constexpr size_t kFiveAllocationsBytes = 3 * 32 + 100 + (9 + 1);

// One new of 24 B, never freed: the block is returned for the test to free after the count.
void* LeakTwentyFour();

// One new of 48 B that it frees: 1 allocation, 1 free, net 0.
void FortyEightFreed();

// Starts a thread that allocates one block of 64 B and frees it, and joins it. On the calling
// thread: the std::thread's own state (its size is the library's business, measured by the
// test with Threads::kThisThread); on the other thread exactly 1 x 64 B.
void AllocateOnAnotherThread();

// Allocates 16 B the first time it is called (a cache filled once), nothing later.
void WarmsUpOnce();

// 8 B, then under a PermitAllocations 1000 B (allocated and freed), then 8 B more: 2 x 8 B
// counted, and the 1000 B not at all.
void PermitsOneThousand();

// Allocates 40 B and throws a std::runtime_error (whose own allocations are counted too).
void AllocatesThenThrows();

// Allocates 1, 2, ..., 15 B (and frees them): 15 allocations, 120 B, from one line.
void FifteenSizes();

}  // namespace ground_truth

#endif  // ALLOCBENCH_TESTS_TESTING_GROUND_TRUTH_H_
