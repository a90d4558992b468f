// Where finished traces go. A real writer serializes and ships them; the benchmarks' writer
// drops them (but must keep them observable, or the optimizer measures nothing).
#ifndef ALLOCBENCH_TRACER_WRITER_H_
#define ALLOCBENCH_TRACER_WRITER_H_

#include "tracer/span_data.h"

namespace tracer {

class Writer {
 public:
  virtual ~Writer() = default;
  // Called once per finished trace (root and every span started so far finished), from the
  // thread that finished its last span, outside any tracer lock. `trace` starts with the root.
  virtual void Write(SpanList trace) = 0;
};

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_WRITER_H_
