// One test per operator new / operator delete form, pinning exactly what each counts. Built
// once per backend with the same expectations: requested bytes do not depend on the allocator.
#include <gtest/gtest.h>

#include <cstdint>
#include <new>

#include "allocbench/counting.h"
#include "counting_test_util.h"

namespace allocbench::counting::testing {
namespace {

constexpr std::align_val_t kAlign64{64};

bool IsAligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

struct alignas(64) Aligned64 {
  char bytes[192];
};

class OperatorNewTest : public ::testing::TestWithParam<Tracking> {
 protected:
  ScopedTracking tracking_{GetParam()};
};
INSTANTIATE_TEST_SUITE_P(Tracking, OperatorNewTest,
                         ::testing::Values(Tracking::kBasic, Tracking::kFull), TrackingName);

TEST_P(OperatorNewTest, Plain) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = ::operator new(32)); }), 32, GetParam());
  ::operator delete(p);
}

TEST_P(OperatorNewTest, Array) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = ::operator new[](32)); }), 32, GetParam());
  ::operator delete[](p);
}

TEST_P(OperatorNewTest, PlainNothrow) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = ::operator new(40, std::nothrow)); }), 40, GetParam());
  ::operator delete(p);
}

TEST_P(OperatorNewTest, ArrayNothrow) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = ::operator new[](40, std::nothrow)); }), 40, GetParam());
  ::operator delete[](p);
}

TEST_P(OperatorNewTest, PlainAligned) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = ::operator new(100, kAlign64)); }), 100, GetParam());
  EXPECT_TRUE(IsAligned(p, 64));
  ::operator delete(p, kAlign64);
}

TEST_P(OperatorNewTest, ArrayAligned) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = ::operator new[](100, kAlign64)); }), 100, GetParam());
  EXPECT_TRUE(IsAligned(p, 64));
  ::operator delete[](p, kAlign64);
}

TEST_P(OperatorNewTest, PlainAlignedNothrow) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = ::operator new(24, kAlign64, std::nothrow)); }), 24,
                 GetParam());
  EXPECT_TRUE(IsAligned(p, 64));
  ::operator delete(p, kAlign64);
}

TEST_P(OperatorNewTest, ArrayAlignedNothrow) {
  void* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = ::operator new[](24, kAlign64, std::nothrow)); }), 24,
                 GetParam());
  EXPECT_TRUE(IsAligned(p, 64));
  ::operator delete[](p, kAlign64);
}

TEST_P(OperatorNewTest, ZeroBytesIsOneAllocationOfZeroBytes) {
  void* p = nullptr;
  const Delta d = Counted([&] { Escape(p = ::operator new(0)); });
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(d.scenario.allocs, 1u);
  EXPECT_EQ(d.scenario.requested_bytes, 0u);
  ::operator delete(p);
}

// Under kBasic an allocation is counted before it is made; a failure must take it back.
TEST_P(OperatorNewTest, FailedNothrowNewCountsNothing) {
  volatile size_t huge = SIZE_MAX / 2;  // volatile: no compile-time size warning
  void* results[2] = {&results, &results};
  ExpectNothing(Counted([&] {
    results[0] = ::operator new(huge, std::nothrow);
    results[1] = ::operator new[](huge, kAlign64, std::nothrow);
  }));
  EXPECT_EQ(results[0], nullptr);
  EXPECT_EQ(results[1], nullptr);
}

// The forms a compiler picks for new-expressions.
TEST_P(OperatorNewTest, NewExpressionArrayOfChar) {
  char* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = new char[32]); }), 32, GetParam());
  ExpectOneFree(Counted([&] { delete[] p; }));
}

TEST_P(OperatorNewTest, NewExpressionOverAlignedType) {
  Aligned64* p = nullptr;
  ExpectOneAlloc(Counted([&] { Escape(p = new Aligned64); }), sizeof(Aligned64), GetParam());
  EXPECT_TRUE(IsAligned(p, 64));
  ExpectOneFree(Counted([&] { delete p; }));
}

class OperatorDeleteTest : public ::testing::TestWithParam<Tracking> {
 protected:
  ScopedTracking tracking_{GetParam()};
};
INSTANTIATE_TEST_SUITE_P(Tracking, OperatorDeleteTest,
                         ::testing::Values(Tracking::kBasic, Tracking::kFull), TrackingName);

TEST_P(OperatorDeleteTest, Plain) {
  void* p = ::operator new(32);
  ExpectOneFree(Counted([&] { ::operator delete(p); }));
}

TEST_P(OperatorDeleteTest, Array) {
  void* p = ::operator new[](32);
  ExpectOneFree(Counted([&] { ::operator delete[](p); }));
}

TEST_P(OperatorDeleteTest, PlainNothrow) {
  void* p = ::operator new(32, std::nothrow);
  ExpectOneFree(Counted([&] { ::operator delete(p, std::nothrow); }));
}

TEST_P(OperatorDeleteTest, ArrayNothrow) {
  void* p = ::operator new[](32, std::nothrow);
  ExpectOneFree(Counted([&] { ::operator delete[](p, std::nothrow); }));
}

TEST_P(OperatorDeleteTest, PlainSized) {
  void* p = ::operator new(32);
  ExpectOneFree(Counted([&] { ::operator delete (p, size_t{32}); }));
}

TEST_P(OperatorDeleteTest, ArraySized) {
  void* p = ::operator new[](32);
  ExpectOneFree(Counted([&] { ::operator delete[](p, size_t{32}); }));
}

TEST_P(OperatorDeleteTest, PlainAligned) {
  void* p = ::operator new(32, kAlign64);
  ExpectOneFree(Counted([&] { ::operator delete(p, kAlign64); }));
}

TEST_P(OperatorDeleteTest, ArrayAligned) {
  void* p = ::operator new[](32, kAlign64);
  ExpectOneFree(Counted([&] { ::operator delete[](p, kAlign64); }));
}

TEST_P(OperatorDeleteTest, PlainSizedAligned) {
  void* p = ::operator new(32, kAlign64);
  ExpectOneFree(Counted([&] { ::operator delete (p, size_t{32}, kAlign64); }));
}

TEST_P(OperatorDeleteTest, ArraySizedAligned) {
  void* p = ::operator new[](32, kAlign64);
  ExpectOneFree(Counted([&] { ::operator delete[](p, size_t{32}, kAlign64); }));
}

TEST_P(OperatorDeleteTest, PlainAlignedNothrow) {
  void* p = ::operator new(32, kAlign64, std::nothrow);
  ExpectOneFree(Counted([&] { ::operator delete(p, kAlign64, std::nothrow); }));
}

TEST_P(OperatorDeleteTest, ArrayAlignedNothrow) {
  void* p = ::operator new[](32, kAlign64, std::nothrow);
  ExpectOneFree(Counted([&] { ::operator delete[](p, kAlign64, std::nothrow); }));
}

TEST_P(OperatorDeleteTest, NullptrIsNotCounted) {
  ExpectNothing(Counted([&] {
    ::operator delete(nullptr);
    ::operator delete[](nullptr);
    ::operator delete (nullptr, size_t{8});
    ::operator delete(nullptr, kAlign64);
    ::operator delete[](nullptr, size_t{8}, kAlign64);
    ::operator delete(nullptr, std::nothrow);
  }));
}

// Failure paths: [new.delete.single] semantics, and nothing counted for a failed request.
// Volatile, so that GCC does not reject the size at compile time (-Walloc-size-larger-than).
volatile size_t g_huge = SIZE_MAX / 2;
int g_handler_calls = 0;

void GiveUpHandler() {
  ++g_handler_calls;
  std::set_new_handler(nullptr);  // the retry finds no handler and throws
}

void ThrowingHandler() {
  ++g_handler_calls;
  throw std::bad_alloc();
}

TEST(OperatorNewFailureTest, ThrowingFormsThrowBadAllocAfterTheNewHandler) {
  for (int form = 0; form < 4; ++form) {
    g_handler_calls = 0;
    std::set_new_handler(GiveUpHandler);
    bool threw = false;
    try {
      switch (form) {
        case 0:
          Escape(::operator new(g_huge));
          break;
        case 1:
          Escape(::operator new[](g_huge));
          break;
        case 2:
          Escape(::operator new(g_huge, kAlign64));
          break;
        default:
          Escape(::operator new[](g_huge, kAlign64));
      }
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    EXPECT_TRUE(threw) << "form " << form;
    EXPECT_EQ(g_handler_calls, 1) << "form " << form;
  }
  std::set_new_handler(nullptr);
}

TEST(OperatorNewFailureTest, NothrowFormsReturnNullptrEvenWhenTheHandlerThrows) {
  g_handler_calls = 0;
  std::set_new_handler(ThrowingHandler);
  void* results[4] = {};
  const Delta d = Counted([&] {
    results[0] = ::operator new(g_huge, std::nothrow);
    results[1] = ::operator new[](g_huge, std::nothrow);
    results[2] = ::operator new(g_huge, kAlign64, std::nothrow);
    results[3] = ::operator new[](g_huge, kAlign64, std::nothrow);
  });
  std::set_new_handler(nullptr);
  for (void* p : results) EXPECT_EQ(p, nullptr);
  EXPECT_EQ(g_handler_calls, 4);
  // The handler's exceptions are allocated (and freed) through the hooks; the failed requests
  // themselves add nothing.
  EXPECT_EQ(d.scenario.allocs, d.scenario.frees);
  EXPECT_LT(d.scenario.requested_bytes, 4096u);
}

}  // namespace
}  // namespace allocbench::counting::testing
