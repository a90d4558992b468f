// A writer that keeps every trace it is given, for the tests to inspect.
#ifndef ALLOCBENCH_TESTS_TRACER_RECORDING_WRITER_H_
#define ALLOCBENCH_TESTS_TRACER_RECORDING_WRITER_H_

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tracer/writer.h"

namespace tracer {

class RecordingWriter : public Writer {
 public:
  void Write(SpanList trace) override {
    std::lock_guard<std::mutex> lock(mutex_);
    traces_.push_back(std::move(trace));
  }
  std::size_t writes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return traces_.size();
  }
  // REQUIRES: no concurrent Write().
  std::vector<SpanList>& traces() { return traces_; }

 private:
  std::mutex mutex_;
  std::vector<SpanList> traces_;
};

// A span's tags as sorted (key, value) pairs, whatever the storage.
inline std::vector<std::pair<std::string, std::string>> SortedTags(const TagStore& tags) {
  std::vector<std::pair<std::string, std::string>> out;
  tags.ForEach([&out](std::string_view key, std::string_view value) {
    out.emplace_back(std::string(key), std::string(value));
  });
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tracer

#endif  // ALLOCBENCH_TESTS_TRACER_RECORDING_WRITER_H_
