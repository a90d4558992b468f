// Container churn: node-based versus flat storage, growth versus reserve.
#include <allocbench/scenario.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

// A span's tags in a node-based map: one node per tag, a bucket array, and key/value strings
// that outgrow the small-string buffer.
ALLOCBENCH_SCENARIO(TagMap, state) {
  const int64_t tags = state.range(0);
  std::vector<std::string> keys;
  for (int64_t i = 0; i < tags; ++i) keys.push_back("component.tag.number." + std::to_string(i));
  for (auto _ : state) {
    std::unordered_map<std::string, std::string> map;
    for (const std::string& key : keys) map.emplace(key, "a value longer than sixteen");
    allocbench::DoNotOptimize(map);
  }
}
ALLOCBENCH_REGISTER(TagMap)
    ->Name("containers/unordered_map_tags")
    ->ArgNames({"tags"})
    ->Args({1})
    ->Args({7});

// push_back without reserve reallocates at every power of two; with reserve, one allocation.
ALLOCBENCH_SCENARIO(VectorFill, state) {
  const int64_t elements = state.range(0);
  const bool reserve = state.range(1) != 0;
  for (auto _ : state) {
    std::vector<int64_t> v;
    if (reserve) v.reserve(elements);
    for (int64_t i = 0; i < elements; ++i) v.push_back(i);
    allocbench::DoNotOptimize(v);
  }
}
ALLOCBENCH_REGISTER(VectorFill)
    ->Name("containers/vector_fill")
    ->ArgNames({"elements", "reserve"})
    ->Args({20, 0})
    ->Args({20, 1});

// make_shared puts the control block and the object in one allocation; shared_ptr(new T) takes two.
struct Payload {
  int64_t values[6];
};

ALLOCBENCH_SCENARIO(SharedPtr, state) {
  const bool make_shared = state.range(0) != 0;
  for (auto _ : state) {
    std::shared_ptr<Payload> p =
        make_shared ? std::make_shared<Payload>() : std::shared_ptr<Payload>(new Payload());
    allocbench::DoNotOptimize(p);
  }
}
ALLOCBENCH_REGISTER(SharedPtr)
    ->Name("memory/shared_ptr")
    ->ArgNames({"make_shared"})
    ->Args({0})
    ->Args({1});

// The same churn from several threads at once: per-op counts do not change with the thread
// count, throughput does.
ALLOCBENCH_SCENARIO(ConcurrentStrings, state) {
  const std::string source(48, 'y');
  for (auto _ : state) {
    std::string copy = source;
    allocbench::DoNotOptimize(copy);
  }
}
ALLOCBENCH_REGISTER(ConcurrentStrings)
    ->Name("threads/string_copy")
    ->Threads(1)
    ->Threads(2)
    ->Threads(4);

}  // namespace
