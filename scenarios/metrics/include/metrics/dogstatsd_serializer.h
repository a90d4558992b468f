// Writes metric contexts in DogStatsD's line format, one count per context:
//   checkout-api.request.duration:1|c|#env:production,service:checkout-api,...\n
// into an output buffer that is reused across calls: once it has grown to a payload's size,
// serializing the same contexts again allocates nothing, whatever the tag storage.
#ifndef ALLOCBENCH_REFERENCE_METRICS_DOGSTATSD_SERIALIZER_H_
#define ALLOCBENCH_REFERENCE_METRICS_DOGSTATSD_SERIALIZER_H_

#include <string>
#include <string_view>

#include "metrics/metric_contexts.h"

namespace metrics {

class DogStatsdSerializer {
 public:
  // The payload for every context of `contexts`; valid until the next call.
  std::string_view Serialize(const MetricContexts& contexts);

 private:
  std::string buffer_;
};

}  // namespace metrics

#endif  // ALLOCBENCH_REFERENCE_METRICS_DOGSTATSD_SERIALIZER_H_
