// A stand-in for a scenario plugin: a shared library dlopen'ed after start-up whose malloc and
// operator new must bind to the counted executable's hooks.
#include <stdlib.h>

namespace {

struct alignas(64) Aligned64 {
  char bytes[64];
};

void Escape(const void* p) { asm volatile("" : : "g"(p) : "memory"); }

}  // namespace

extern "C" __attribute__((visibility("default"))) void allocbench_test_plugin_churn() {
  void* a = malloc(10);
  char* b = new char[20];
  auto* c = new Aligned64;
  void* d = calloc(3, 10);
  Escape(a);
  Escape(b);
  Escape(c);
  Escape(d);
  free(a);
  delete[] b;
  delete c;
  free(d);
}
