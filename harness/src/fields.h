// The one list of reported metrics. The JSON writer, the console table and the `fields` block
// of every results file (which the Python side reads for its tables and gates) all iterate it,
// so adding a metric is one line here and no output can disagree with another.
#ifndef ALLOCBENCH_HARNESS_FIELDS_H_
#define ALLOCBENCH_HARNESS_FIELDS_H_

#include <optional>

#include "result.h"

namespace allocbench {

enum class Section { kAlloc, kTime, kInstructions };

// How `allocbench compare` treats the metric.
enum class Gate {
  kExact,  // deterministic count: any change is a change
  kTime,   // noisy: confidence interval of the relative difference
  kInfo,   // shown, never gated
};

struct Field {
  const char* key;  // JSON key inside its section
  Section section;
  const char* unit;  // "B", "allocs", "ns", "ops/s", "" (a ratio)
  Gate gate;
  const char* column;  // console column header; nullptr: JSON only
  const char* help;
  std::optional<double> (*get)(const InstanceResult&);
};

namespace fields_internal {
template <double AllocMetrics::*member>
std::optional<double> Alloc(const InstanceResult& r) {
  if (!r.alloc) return std::nullopt;
  return (*r.alloc).*member;
}
template <double TimeMetrics::*member>
std::optional<double> Time(const InstanceResult& r) {
  if (!r.time) return std::nullopt;
  return (*r.time).*member;
}
inline std::optional<double> Instructions(const InstanceResult& r) {
  if (!r.instructions) return std::nullopt;
  return r.instructions->instructions_per_op;
}
inline std::optional<double> EstimatedCycles(const InstanceResult& r) {
  if (!r.instructions) return std::nullopt;
  return r.instructions->estimated_cycles_per_op;
}
inline std::optional<double> PeakLive(const InstanceResult& r) {
  if (!r.alloc) return std::nullopt;
  return static_cast<double>(r.alloc->peak_live_bytes);
}
}  // namespace fields_internal

inline constexpr Field kFields[] = {
    {"bytes_per_op", Section::kAlloc, "B", Gate::kExact, "B/op",
     "requested bytes per op per thread (allocator-independent)",
     &fields_internal::Alloc<&AllocMetrics::bytes_per_op>},
    {"allocs_per_op", Section::kAlloc, "allocs", Gate::kExact, "allocs/op",
     "allocations per op per thread", &fields_internal::Alloc<&AllocMetrics::allocs_per_op>},
    {"frees_per_op", Section::kAlloc, "frees", Gate::kExact, nullptr, "frees per op per thread",
     &fields_internal::Alloc<&AllocMetrics::frees_per_op>},
    // Usable bytes and peaks depend on the allocator's state (which free block serves a
    // request, how threads interleave): they vary between processes, so they inform, not gate.
    {"usable_bytes_per_op", Section::kAlloc, "B", Gate::kInfo, nullptr,
     "bytes the allocator handed out per op per thread (allocator-dependent)",
     &fields_internal::Alloc<&AllocMetrics::usable_bytes_per_op>},
    {"first_op_bytes", Section::kAlloc, "B", Gate::kInfo, nullptr,
     "requested bytes of the first (cold) op, per thread",
     &fields_internal::Alloc<&AllocMetrics::first_op_bytes>},
    {"first_op_allocs", Section::kAlloc, "allocs", Gate::kInfo, nullptr,
     "allocations of the first (cold) op, per thread",
     &fields_internal::Alloc<&AllocMetrics::first_op_allocs>},
    {"peak_live_bytes", Section::kAlloc, "B", Gate::kInfo, nullptr,
     "highest usable bytes live at once during the pass, all the scenario's threads together",
     &fields_internal::PeakLive},
    {"background_bytes_per_op", Section::kAlloc, "B", Gate::kInfo, nullptr,
     "requested bytes of other threads during the windows, per scenario op",
     &fields_internal::Alloc<&AllocMetrics::background_bytes_per_op>},
    {"background_allocs_per_op", Section::kAlloc, "allocs", Gate::kInfo, nullptr,
     "allocations of other threads during the windows, per scenario op",
     &fields_internal::Alloc<&AllocMetrics::background_allocs_per_op>},
    // Instructions under callgrind repeat exactly where the code is deterministic
    // (docs/instructions.md, "Exact CPU cost"), so they gate like the allocation counts. The cache
    // simulation's misses depend on addresses and varied between processes where Ir did not: shown,
    // not gated.
    {"instructions_per_op", Section::kInstructions, "Ir", Gate::kExact, "Ir/op",
     "instructions executed per op per thread, under callgrind (--instructions)",
     &fields_internal::Instructions},
    {"estimated_cycles_per_op", Section::kInstructions, "cycles", Gate::kInfo, nullptr,
     "L1 hits + 5 x LL hits + 35 x RAM accesses per op per thread, from callgrind's cache "
     "simulation (--estimated-cycles)",
     &fields_internal::EstimatedCycles},
    {"ns_per_op", Section::kTime, "ns", Gate::kTime, "ns/op",
     "median over repetitions of wall ns per op per thread",
     &fields_internal::Time<&TimeMetrics::median_ns>},
    {"cpu_ns_per_op", Section::kTime, "ns", Gate::kTime, nullptr,
     "median over repetitions of the timed threads' CPU ns per op per thread (no time waiting "
     "for a core, a lock or I/O)",
     &fields_internal::Time<&TimeMetrics::median_cpu_ns>},
    {"mean_ns_per_op", Section::kTime, "ns", Gate::kInfo, nullptr,
     "mean over repetitions of wall ns per op per thread",
     &fields_internal::Time<&TimeMetrics::mean_ns>},
    {"stddev_ns_per_op", Section::kTime, "ns", Gate::kInfo, nullptr,
     "sample standard deviation over repetitions", &fields_internal::Time<&TimeMetrics::stddev_ns>},
    {"cv", Section::kTime, "", Gate::kInfo, "cv", "coefficient of variation over repetitions",
     &fields_internal::Time<&TimeMetrics::cv>},
    {"ops_per_s", Section::kTime, "ops/s", Gate::kInfo, "ops/s",
     "throughput of all threads together, from the median",
     &fields_internal::Time<&TimeMetrics::ops_per_s>},
};

inline const char* SectionName(Section s) {
  return s == Section::kAlloc ? "alloc" : s == Section::kTime ? "time" : "instructions";
}
inline const char* GateName(Gate g) {
  return g == Gate::kExact ? "exact" : g == Gate::kTime ? "time" : "info";
}

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_FIELDS_H_
