// The checks behind the GoogleTest and Catch2 macros: run the statement counted, judge, and on
// failure say where every allocation the check did not allow was made.
#include <sstream>
#include <string>
#include <vector>

#include "allocbench/testing.h"
#include "recorder.h"
#include "stacks.h"

namespace allocbench::testing::internal {
namespace {

constexpr size_t kListed = 10;  // lines of the listing; the rest is a count

std::string Plural(uint64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string Amount(uint64_t allocs, uint64_t bytes) {
  return Plural(allocs, "allocation") + ", " + std::to_string(bytes) + " B";
}

bool Passes(const Expectation& e, const Counts& c) {
  switch (e.kind) {
    case Kind::kNoAlloc:
      return c.allocs == 0;
    case Kind::kExactly:
      return c.allocs == e.allocs && c.bytes == e.bytes;
    case Kind::kAtMost:
      return c.allocs <= e.allocs && c.bytes <= e.bytes;
    case Kind::kNoLeak:
      return c.net_bytes == 0;
  }
  return false;
}

std::string Expected(const Expectation& e) {
  switch (e.kind) {
    case Kind::kNoAlloc:
      return "no allocation";
    case Kind::kExactly:
      return "exactly " + Amount(e.allocs, e.bytes);
    case Kind::kAtMost:
      return "at most " + Amount(e.allocs, e.bytes);
    case Kind::kNoLeak:
      return "every block it allocates freed by its end";
  }
  return "";
}

std::string Actual(const Expectation& e, const Counts& c) {
  std::string actual = Amount(c.allocs, c.bytes);
  if (e.kind == Kind::kNoLeak) {
    actual = std::to_string(c.net_bytes) + " B left allocated (" + actual + ", " +
             Plural(c.frees, "free") + ")";
  }
  return actual;
}

std::string Location(const Frame& frame) {
  return frame.file.empty() ? "" : frame.file + ":" + std::to_string(frame.line);
}

// "F (file:line)", "F", "file:line", or "an unknown function (module+0x...)".
std::string Where(const Frame& frame) {
  const std::string location = Location(frame);
  if (frame.function.empty()) {
    return location.empty() ? "an unknown function (" + frame.module + ")" : location;
  }
  const std::string name = ShortName(frame.function);
  return location.empty() ? name : name + " (" + location + ")";
}

// One line of the listing: consecutive allocations of one size from one place.
struct Line {
  uint64_t count;
  uint64_t bytes;
  std::string site;    // "F (file:line)"
  std::string caller;  // "" when the stack ends there
  std::string caller_location;
};

std::vector<Line> Listing(const Recorder& recorder, bool leaks_only, uint64_t* listed) {
  const std::vector<std::vector<Frame>> stacks = ProgramFrames(recorder);
  std::vector<Line> lines;
  *listed = 0;
  for (int i = 0; i < recorder.events(); ++i) {
    const Event& event = recorder.event(i);
    if (leaks_only && event.freed) continue;
    const std::vector<Frame>& frames = stacks[static_cast<size_t>(i)];
    Line line{1, event.bytes, frames.empty() ? "allocbench's own code" : Where(frames[0]), "", ""};
    // The caller: the next frame somewhere else (inlined callers count).
    for (size_t f = 1; f < frames.size(); ++f) {
      if (Where(frames[f]) != line.site) {
        line.caller = Where(frames[f]);
        line.caller_location = Location(frames[f]);
        break;
      }
    }
    // One line for consecutive allocations of one size from one place (by file:line: the
    // names of inlined frames vary with the return address).
    if (!lines.empty() && lines.back().bytes == line.bytes && lines.back().site == line.site &&
        lines.back().caller_location == line.caller_location) {
      ++lines.back().count;
    } else if (lines.size() == kListed) {
      break;
    } else {
      lines.push_back(line);
    }
    ++*listed;
  }
  return lines;
}

std::string Describe(const Expectation& e, const char* macro, const char* text,
                     const Counts& counts, const Recorder& stacks, const Counts& stacks_counts,
                     bool rerun) {
  std::ostringstream out;
  out << macro << "(" << text << ")\n"
      << "  Expected: " << Expected(e) << "\n"
      << "    Actual: " << Actual(e, counts) << "\n";
  const bool leaks = e.kind == Kind::kNoLeak;
  if (rerun) {
    out << "  Where, from running it again";
    // net_bytes only where the check judged it: the exact and budget checks do not track it.
    if (stacks_counts.allocs != counts.allocs || stacks_counts.bytes != counts.bytes ||
        (leaks && stacks_counts.net_bytes != counts.net_bytes)) {
      out << " (which made " << Actual(e, stacks_counts) << ": not the same as the first run)";
    }
    out << ":\n";
  }
  uint64_t listed = 0;
  const char* made = e.kind == Kind::kNoAlloc ? " unexpected" : "";
  for (const Line& line : Listing(stacks, leaks, &listed)) {
    out << "  " << line.count << made << (leaks ? " block" : " allocation")
        << (line.count == 1 ? "" : "s") << " of " << line.bytes << " B "
        << (leaks ? "left allocated, made in " : "in ") << line.site << "\n";
    if (!line.caller.empty()) out << "      called from " << line.caller << "\n";
  }
  if (!leaks && stacks_counts.allocs > listed) {
    out << "  ... and " << Plural(stacks_counts.allocs - listed, "more allocation")
        << " not listed\n";
  }
  if (stacks.lost()) out << "  (memory ran out while recording: the listing may be incomplete)\n";
  std::string message = out.str();
  message.pop_back();  // the frameworks add their own line end
  return message;
}

}  // namespace

Verdict CheckCallable(const Expectation& expectation, const char* macro, const char* text,
                      Callable statement) {
  if (!Available()) {  // the statement still runs, for what the test does after it
    statement();
    return {Verdict::State::kSkipped, std::string(macro) + " skipped: " + UnavailableReason()};
  }
  // kNoAlloc fails on any allocation, so its first run may as well keep their stacks: a passing
  // check captures nothing. The others capture only on a second run, after a failure.
  const bool capture_first = expectation.kind == Kind::kNoAlloc;
  // The others need only the counts (the hooks' fast path), and NO_LEAK the blocks.
  const Detail detail = capture_first                       ? Detail::kStacks
                        : expectation.kind == Kind::kNoLeak ? Detail::kBlocks
                                                            : Detail::kCounts;
  Counts counts;
  {
    Window first(Threads::kThisThread, detail);
    statement();
    counts = first.Close();
    if (Passes(expectation, counts)) return {Verdict::State::kPassed, ""};
    if (capture_first) {
      return {Verdict::State::kFailed,
              Describe(expectation, macro, text, counts, first.recorder(), counts, false)};
    }
  }
  Window again(Threads::kThisThread, Detail::kStacks);
  statement();
  const Counts again_counts = again.Close();
  return {Verdict::State::kFailed,
          Describe(expectation, macro, text, counts, again.recorder(), again_counts, true)};
}

}  // namespace allocbench::testing::internal
