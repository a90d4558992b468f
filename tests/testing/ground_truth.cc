#include "ground_truth.h"

#include <stdlib.h>
#include <string.h>

#include <stdexcept>
#include <thread>

#include "allocbench/testing.h"

namespace ground_truth {
namespace {
// Opaque to the optimiser, so that no new/delete pair is elided.
void Keep(void* p) { asm volatile("" : : "g"(p) : "memory"); }
const char* volatile g_nine = "123456789";
void* g_cache = nullptr;
}  // namespace

__attribute__((noinline)) void FiveAllocations() {
  void* a = ::operator new(32);  // line:five-a
  void* b = ::operator new(32);  // line:five-b
  void* c = ::operator new(32);  // line:five-c
  void* m = malloc(100);         // line:five-malloc
  char* s = strdup(g_nine);      // line:five-strdup
  Keep(a), Keep(b), Keep(c), Keep(m), Keep(s);
  ::operator delete(a);
  ::operator delete(b);
  ::operator delete(c);
  free(m);
  free(s);
}

__attribute__((noinline)) void* LeakTwentyFour() {
  void* p = ::operator new(24);  // line:leak
  Keep(p);
  return p;
}

__attribute__((noinline)) void FortyEightFreed() {
  void* p = ::operator new(48);  // line:forty-eight
  Keep(p);
  ::operator delete(p);
}

__attribute__((noinline)) void AllocateOnAnotherThread() {
  std::thread worker([] {
    void* p = ::operator new(64);
    Keep(p);
    ::operator delete(p);
  });
  worker.join();
}

__attribute__((noinline)) void WarmsUpOnce() {
  if (g_cache == nullptr) g_cache = ::operator new(16);
  Keep(g_cache);
}

__attribute__((noinline)) void PermitsOneThousand() {
  void* a = ::operator new(8);
  Keep(a);
  {
    allocbench::testing::PermitAllocations permit;
    void* big = malloc(1000);
    Keep(big);
    free(big);
  }
  void* b = ::operator new(8);
  Keep(b);
  ::operator delete(a);
  ::operator delete(b);
}

__attribute__((noinline)) void AllocatesThenThrows() {
  void* p = ::operator new(40);
  Keep(p);
  ::operator delete(p);
  throw std::runtime_error("expected by the test");
}

__attribute__((noinline)) void FifteenSizes() {
  for (size_t size = 1; size <= 15; ++size) {
    void* p = malloc(size);  // line:fifteen
    Keep(p);
    free(p);
  }
}

}  // namespace ground_truth
