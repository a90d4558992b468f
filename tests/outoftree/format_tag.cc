#include <allocbench/scenario.h>

#include "tinytags.h"

// "http.method:GET" + NUL: 16 B in one allocation.
ALLOCBENCH_SCENARIO(FormatTag, state) {
  for (auto _ : state) {
    auto tag = tinytags::FormatTag("http.method", "GET");
    allocbench::DoNotOptimize(tag);
  }
}
ALLOCBENCH_REGISTER(FormatTag)->Name("outoftree/format_tag");
