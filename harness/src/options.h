// Command-line options of allocbench-run.
#ifndef ALLOCBENCH_HARNESS_OPTIONS_H_
#define ALLOCBENCH_HARNESS_OPTIONS_H_

#include <string>
#include <utility>
#include <vector>

#include "count_pass.h"
#include "paired_pass.h"
#include "time_pass.h"

namespace allocbench {

struct Options {
  std::vector<std::string> plugins;  // empty: the built-in plugin next to the executable
  std::string filter;                // ECMAScript regex searched in instance names
  std::string out;                   // results file; empty: table only
  bool list = false;
  bool help = false;
  bool quiet = false;
  bool count = true;
  bool time = true;
  bool instructions = false;        // also the instructions pass (instructions_pass.h)
  bool estimated_cycles = false;    // ... with callgrind's cache simulation
  std::string callgrind_dumps;      // set: this process is the instructions pass under callgrind
  bool isolate = true;              // each instance in a child process (see isolation.h)
  double instance_timeout_s = 600;  // per instance, both passes; isolated runs only
  CountOptions count_options;
  TimeOptions time_options;
  PairedOptions paired;  // paired.against set: the paired time pass, and only it
  std::vector<std::pair<std::string, std::string>> context;  // --context key.path=value
};

// Throws UserError naming the flag and what it expects.
Options ParseOptions(int argc, const char* const* argv);

extern const char kUsage[];

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_OPTIONS_H_
