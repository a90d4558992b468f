// What the counting layer costs a realistic allocation-heavy body: the same loop, timed, in a
// binary without hooks (counting_overhead_plain) and in one with the system backend's hooks
// (counting_overhead_hooked), whose first argument is the mode:
//   off    hooks present, thread not counting (what a time pass pays)
//   basic  kCounting + Tracking::kBasic (a count pass)
//   full   kCounting + Tracking::kFull (a count pass with usable and peak-live bytes)
// Prints one line: "<config> ns_per_op=<x> ops=<n> [allocs_per_op=<a>]". counting_overhead.sh
// interleaves the configurations and reports medians and ratios.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef ALLOCBENCH_HOOKED
#include "allocbench/counting.h"
#endif

namespace {

// Tracer-ish churn: an operation name and four tag values beyond the small-string buffer, a
// vector grown without reserve (1 -> 2 -> 4), a one-entry metrics map; all freed per op.
// About 11 allocations and 11 frees per op under libstdc++.
const char* const kTagPrefixes[4] = {"http.url:/api/v1/resources/", "component:net/http-client-",
                                     "peer.hostname:backend-service-",
                                     "span.kind:client-outbound-"};

uint64_t Op(uint64_t i) {
  std::string name = "operation.name.for.span.";
  name += static_cast<char>('a' + i % 26);
  std::vector<std::string> tags;
  for (const char* prefix : kTagPrefixes) {
    tags.emplace_back(prefix);
    tags.back() += static_cast<char>('0' + i % 10);
  }
  std::unordered_map<std::string, int64_t> metrics;
  metrics.emplace("http.response.content_length", static_cast<int64_t>(i));
  return name.size() + tags.size() + tags[3].size() + metrics.size();
}

uint64_t Run(uint64_t ops) {
  uint64_t checksum = 0;
  for (uint64_t i = 0; i < ops; ++i) checksum += Op(i);
  return checksum;
}

int Usage(const char* argv0) {
#ifdef ALLOCBENCH_HOOKED
  std::fprintf(stderr, "usage: %s off|basic|full [ops]\n", argv0);
#else
  std::fprintf(stderr, "usage: %s [ops]\n", argv0);
#endif
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int arg = 1;
  const char* config = "plain";
#ifdef ALLOCBENCH_HOOKED
  namespace counting = allocbench::counting;
  if (argc < 2) return Usage(argv[0]);
  config = argv[arg++];
  counting::Mode mode = counting::Mode::kCounting;
  if (std::strcmp(config, "off") == 0) {
    mode = counting::Mode::kPaused;
  } else if (std::strcmp(config, "basic") == 0) {
    counting::SetTracking(counting::Tracking::kBasic);
  } else if (std::strcmp(config, "full") == 0) {
    counting::SetTracking(counting::Tracking::kFull);
  } else {
    return Usage(argv[0]);
  }
#endif
  uint64_t ops = 1000000;
  if (arg < argc) {
    char* end = nullptr;
    ops = std::strtoull(argv[arg], &end, 10);
    if (end == argv[arg] || *end != '\0' || ops == 0) return Usage(argv[0]);
  }

  // Warm-up (caches, allocator arenas, the counter slot), the same in both binaries.
#ifdef ALLOCBENCH_HOOKED
  counting::SetMode(mode);
  const counting::Snapshot before = counting::Read();
#endif
  uint64_t checksum = Run(ops / 10);
#ifdef ALLOCBENCH_HOOKED
  const counting::Snapshot warm = counting::Read();
#endif
  const auto start = std::chrono::steady_clock::now();
  checksum += Run(ops);
  const auto stop = std::chrono::steady_clock::now();
#ifdef ALLOCBENCH_HOOKED
  const counting::Snapshot after = counting::Read();
  counting::SetMode(counting::Mode::kIgnored);
#endif

  const double ns = std::chrono::duration<double, std::nano>(stop - start).count();
  std::printf("%s ns_per_op=%.2f ops=%llu", config, ns / static_cast<double>(ops),
              static_cast<unsigned long long>(ops));
#ifdef ALLOCBENCH_HOOKED
  std::printf(
      " allocs_per_op=%.2f warmup_allocs_per_op=%.2f",
      static_cast<double>(after.scenario.allocs - warm.scenario.allocs) / static_cast<double>(ops),
      static_cast<double>(warm.scenario.allocs - before.scenario.allocs) /
          static_cast<double>(ops / 10));
#endif
  std::printf(" checksum=%llu\n", static_cast<unsigned long long>(checksum));
  return 0;
}
