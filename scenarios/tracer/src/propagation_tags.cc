#include "tracer/propagation_tags.h"

namespace tracer {
namespace {

// Fixed width, as the "_dd.p.tid" tag wants: always 16 digits, so always the same allocation.
std::string Hex16(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  char buffer[16];
  for (int i = 15; i >= 0; --i) {
    buffer[i] = kDigits[value & 0xf];
    value >>= 4;
  }
  return std::string(buffer, sizeof buffer);
}

void AppendTag(std::string& out, const char* key, const std::string& value) {
  if (value.empty()) return;
  if (!out.empty()) out += ',';
  out += key;
  out += '=';
  out += value;
}

}  // namespace

PropagationTags PropagationTags::ForNewTrace(uint64_t trace_id_high) {
  PropagationTags tags;
  tags.sampling_priority = 1;
  tags.decision_maker = "-0";
  tags.trace_id_high = Hex16(trace_id_high);
  tags.knuth_sampling_rate = "1";
  return tags;
}

std::string PropagationTags::EncodeHeader() const {
  std::string header;
  AppendTag(header, "_dd.p.dm", decision_maker);
  AppendTag(header, "_dd.p.tid", trace_id_high);
  AppendTag(header, "_dd.p.ksr", knuth_sampling_rate);
  return header;
}

std::shared_ptr<PropagationTags> CopyPropagationTags(const PropagationTags& tags) {
  return std::make_shared<PropagationTags>(tags);
}

bool operator==(const PropagationTags& a, const PropagationTags& b) {
  return a.sampling_priority == b.sampling_priority && a.origin == b.origin &&
         a.decision_maker == b.decision_maker && a.trace_id_high == b.trace_id_high &&
         a.knuth_sampling_rate == b.knuth_sampling_rate;
}

}  // namespace tracer
