// One test per malloc-family function, pinning exactly what each counts. Built once per backend
// with the same expectations: requested bytes do not depend on the allocator.
#include <errno.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cstdint>

#include "allocbench/counting.h"
#include "counting_test_util.h"

namespace allocbench::counting::testing {
namespace {

bool IsAligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

class MallocFamilyTest : public ::testing::TestWithParam<Tracking> {
 protected:
  ScopedTracking tracking_{GetParam()};
};
INSTANTIATE_TEST_SUITE_P(Tracking, MallocFamilyTest,
                         ::testing::Values(Tracking::kBasic, Tracking::kFull), TrackingName);

TEST_P(MallocFamilyTest, Malloc) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = malloc(100)); }), 100, GetParam());
  EXPECT_GE(malloc_usable_size(p), 100u);
  free(p);
}

TEST_P(MallocFamilyTest, MallocZeroIsOneAllocationOfZeroBytes) {
  void* p = nullptr;
  const Delta d = Counted([&] { Escape(p = malloc(0)); });
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(d.scenario.allocs, 1u);
  EXPECT_EQ(d.scenario.requested_bytes, 0u);
  free(p);
}

// Under kBasic an allocation is counted before it is made; a failure must take it back.
TEST_P(MallocFamilyTest, FailedMallocCountsNothing) {
  void* p = nullptr;
  int error = 0;
  volatile size_t huge = SIZE_MAX / 2;  // volatile: no compile-time size warning
  ExpectNothing(Counted([&] {
    Escape(p = malloc(huge));
    error = errno;
  }));
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(error, ENOMEM);
}

TEST_P(MallocFamilyTest, CallocRequestsCountTimesSize) {
  unsigned char* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = static_cast<unsigned char*>(calloc(10, 12))); }), 120,
                 GetParam());
  for (int i = 0; i < 120; ++i) ASSERT_EQ(p[i], 0) << i;
  free(p);
}

TEST_P(MallocFamilyTest, CallocOverflowFailsAndCountsNothing) {
  void* p = nullptr;
  int error = 0;
  volatile size_t half = SIZE_MAX / 2 + 2;  // volatile: no compile-time overflow warning
  ExpectNothing(Counted([&] {
    Escape(p = calloc(half, 2));
    error = errno;
  }));
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(error, ENOMEM);
}

TEST_P(MallocFamilyTest, ReallocOfNullptrIsOneAllocation) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = realloc(nullptr, 40)); }), 40, GetParam());
  free(p);
}

TEST_P(MallocFamilyTest, ReallocToZeroIsOneFreeAndReturnsNullptr) {
  void* p = malloc(40);
  void* result = p;
  ExpectOneFree(Counted([&] { Escape(result = realloc(p, 0)); }));
  EXPECT_EQ(result, nullptr);  // glibc's behaviour, under every backend
}

TEST_P(MallocFamilyTest, ReallocIsOneFreePlusOneAllocationOfTheNewSize) {
  auto* p = static_cast<char*>(malloc(40));
  memset(p, 'x', 40);
  char* grown = nullptr;
  const Delta d = Counted([&] { Escape(grown = static_cast<char*>(realloc(p, 4000))); });
  EXPECT_EQ(d.scenario.allocs, 1u);
  EXPECT_EQ(d.scenario.frees, 1u);
  EXPECT_EQ(d.scenario.requested_bytes, 4000u);
  if (GetParam() == Tracking::kFull) {
    EXPECT_GE(d.scenario.usable_bytes, 4000u);
  } else {
    EXPECT_EQ(d.scenario.usable_bytes, 0u);
  }
  for (int i = 0; i < 40; ++i) ASSERT_EQ(grown[i], 'x') << i;
  free(grown);
}

TEST_P(MallocFamilyTest, ReallocarrayIsCountedAsRealloc) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = reallocarray(nullptr, 10, 12)); }), 120, GetParam());
  void* grown = nullptr;
  const Delta d = Counted([&] { Escape(grown = reallocarray(p, 100, 12)); });
  EXPECT_EQ(d.scenario.allocs, 1u);
  EXPECT_EQ(d.scenario.frees, 1u);
  EXPECT_EQ(d.scenario.requested_bytes, 1200u);
  free(grown);
}

TEST_P(MallocFamilyTest, ReallocarrayOverflowFailsAndCountsNothing) {
  void* p = malloc(8);
  void* result = p;
  volatile size_t half = SIZE_MAX / 2 + 2;
  // Through a volatile pointer: GCC assumes reallocarray released p (-Wuse-after-free).
  void* (*volatile reallocarray_fn)(void*, size_t, size_t) = reallocarray;
  ExpectNothing(Counted([&] { Escape(result = reallocarray_fn(p, half, 2)); }));
  EXPECT_EQ(result, nullptr);
  free(p);  // untouched by the failed call
}

TEST_P(MallocFamilyTest, Free) {
  void* p = malloc(100);
  ExpectOneFree(Counted([&] { free(p); }));
}

TEST_P(MallocFamilyTest, FreeOfNullptrIsNotCounted) {
  ExpectNothing(Counted([&] { free(nullptr); }));
}

TEST_P(MallocFamilyTest, PosixMemalign) {
  void* p = nullptr;
  int result = -1;
  ExpectOneAlloc(Counted([&] { result = posix_memalign(&p, 64, 100); }), 100, GetParam());
  EXPECT_EQ(result, 0);
  EXPECT_TRUE(IsAligned(p, 64));
  free(p);
}

TEST_P(MallocFamilyTest, PosixMemalignRejectsBadAlignmentAndCountsNothing) {
  void* p = nullptr;
  int result = 0;
  ExpectNothing(Counted([&] { result = posix_memalign(&p, 24, 100); }));
  EXPECT_EQ(result, EINVAL);
  EXPECT_EQ(p, nullptr);
}

TEST_P(MallocFamilyTest, AlignedAlloc) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = aligned_alloc(64, 128)); }), 128, GetParam());
  EXPECT_TRUE(IsAligned(p, 64));
  free(p);
}

TEST_P(MallocFamilyTest, Memalign) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = memalign(256, 100)); }), 100, GetParam());
  EXPECT_TRUE(IsAligned(p, 256));
  free(p);
}

TEST_P(MallocFamilyTest, Valloc) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = valloc(100)); }), 100, GetParam());
  EXPECT_TRUE(IsAligned(p, PageSize()));
  free(p);
}

// pvalloc allocates whole pages, so the request is the size rounded up to the page size.
TEST_P(MallocFamilyTest, PvallocRequestsWholePages) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = pvalloc(100)); }), PageSize(), GetParam());
  EXPECT_TRUE(IsAligned(p, PageSize()));
  free(p);
}

TEST_P(MallocFamilyTest, StrdupIsCountedThroughMalloc) {
  char* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = strdup("hello")); }), 6, GetParam());
  EXPECT_STREQ(p, "hello");
  ExpectOneFree(Counted([&] { free(p); }));
}

TEST_P(MallocFamilyTest, MallocUsableSizeIsNotCounted) {
  void* p = malloc(100);
  size_t usable = 0;
  ExpectNothing(Counted([&] { usable = malloc_usable_size(p); }));
  EXPECT_GE(usable, 100u);
  EXPECT_EQ(malloc_usable_size(nullptr), 0u);
  free(p);
}

}  // namespace
}  // namespace allocbench::counting::testing
