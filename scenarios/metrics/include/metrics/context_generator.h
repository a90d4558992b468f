// A deterministic stand-in for a metrics agent's parsed configuration: C metric contexts, each a
// metric name and T tags. Names, keys and values are derived from indices with realistic shapes
// and lengths (`env:production`, `service:checkout-api`, `http.route:/api/v2/orders/{id}`,
// `pod_name:checkout-api-7d9f8b6c5-x2k4p`), with realistic repetition: every context has the
// same T keys, values come from per-key sets of 1 to 600 (so interning shares them), and
// about a third of the "key:value" strings fit the 15-character small-string buffer.
//
// The vocabulary is built once, at construction; the accessors only index into it.
#ifndef ALLOCBENCH_REFERENCE_METRICS_CONTEXT_GENERATOR_H_
#define ALLOCBENCH_REFERENCE_METRICS_CONTEXT_GENERATOR_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace metrics {

class ContextGenerator {
 public:
  // A real agent's default: 7,500 contexts of 26 tags.
  static constexpr int kDefaultContexts = 7500;
  static constexpr int kDefaultTagsPerContext = 26;

  // REQUIRES: contexts >= 0, tags_per_context >= 0. Keys past the 26 standard ones are
  // `custom.tag_N`.
  ContextGenerator(int contexts, int tags_per_context);

  int contexts() const { return contexts_; }
  int tags_per_context() const { return static_cast<int>(keys_.size()); }

  std::string_view Name(int context) const;
  std::string_view TagKey(int tag) const { return keys_[tag]; }
  std::string_view TagValue(int context, int tag) const;

 private:
  int contexts_;
  std::vector<std::string> names_;
  std::vector<std::string> keys_;
  std::vector<std::vector<std::string>> values_;  // per tag: the values it can take
};

}  // namespace metrics

#endif  // ALLOCBENCH_REFERENCE_METRICS_CONTEXT_GENERATOR_H_
