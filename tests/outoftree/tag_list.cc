#include <allocbench/scenario.h>

#include <memory>
#include <vector>

#include "tinytags.h"

// A vector of 3 pointers (24 B) plus tags of 16, 16 and 14 B: 70 B in 4 allocations.
ALLOCBENCH_SCENARIO(TagList, state) {
  for (auto _ : state) {
    std::vector<std::unique_ptr<char[]>> tags;
    tags.reserve(3);
    tags.push_back(tinytags::FormatTag("http.method", "GET"));
    tags.push_back(tinytags::FormatTag("http.status", "200"));
    tags.push_back(tinytags::FormatTag("component", "net"));
    allocbench::DoNotOptimize(tags);
  }
}
ALLOCBENCH_REGISTER(TagList)->Name("outoftree/tag_list");
