#include "options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "user_error.h"

namespace allocbench {

const char kUsage[] = R"(usage: allocbench-run [options]

Runs scenario plugins under the allocation-counting pass and the Google Benchmark time pass and
prints B/op, allocs/op, ns/op and ops/s; with --out, writes the results as JSON.

  --plugin PATH        load a scenario plugin (repeatable); default: the built-in scenarios
  --list               list the scenario instances and exit
  --filter REGEX       run only instances whose name matches REGEX (ECMAScript, searched)
  --out FILE           write results JSON to FILE (atomically; progress goes to FILE.partial)
  --count-warmup N     warm-up ops per thread before the count windows, cold op included [1000]
  --count-ops N        ops per thread in each of the two count windows [1000]
  --force-count-ops    --count-warmup and --count-ops also for instances whose scenario sets its
                       own (CountOps): what allocbench profile needs
  --against PATH       the paired time pass, and only it: the instances both --plugin PATH
                       (the base build) and this plugin (the candidate build of the same
                       scenarios) register run in two worker processes, short batches of
                       base and candidate in turn; every pair's times go to the results
                       ('allocbench compare' and 'ab' judge their ratios; docs/paired.md)
  --paired-time SECONDS
                       time per instance of the paired pass, warm-up (the first tenth of
                       each session) included [1]
  --paired-sessions N  sessions per instance of the paired pass, each with fresh processes
                       of both sides [10]
  --batch-time SECONDS the shortest batch of either side in the paired pass [0.0001]
  --repetitions N      time-pass repetitions, one sample each [5]
  --min-time SECONDS   minimum time of one repetition [0.05]
  --instructions       also run the count pass again under valgrind's callgrind, collecting
                       only inside its two windows: instructions_per_op (exact where the code
                       is deterministic; valgrind must be on PATH)
  --estimated-cycles   with --instructions: also simulate the caches (slower) and report
                       estimated_cycles_per_op (L1 hits + 5 x LL hits + 35 x RAM accesses)
  --no-count           skip the count pass
  --no-time            skip the time pass
  --instance-timeout SECONDS
                       an instance still running after this long (both passes; apart from
                       them, its instructions pass) is killed and recorded as failed [600]
  --no-isolation       measure every instance in this process, not one child process each: a
                       crash then ends the run and --instance-timeout does not apply (for gdb)
  --context KEY=VALUE  add KEY (dotted path, e.g. revision.sha) to the results' context
  --quiet              do not print the table
  --help               show this help

An instance that crashes, aborts, throws, exits, signals allocbench-run or times out is
recorded as failed with the reason (in its child process), and the others are still measured;
processes it leaves running are killed.

Exit codes: 0 every instance measured, 1 an instance failed (see "error" in the results, the
rest are measured), 2 bad input or usage, 3 internal error, 130 interrupted by SIGINT or SIGTERM
(results so far are kept in FILE.partial).
)";

namespace {

int64_t ParsePositive(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < 1) {
    throw UserError(flag + " expects a whole number >= 1, not '" + text + "'");
  }
  return value;
}

double ParseSeconds(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(value > 0) || !std::isfinite(value)) {
    throw UserError(flag + " expects a finite number of seconds > 0, not '" + text + "'");
  }
  return value;
}

}  // namespace

Options ParseOptions(int argc, const char* const* argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string value;
    bool has_value = false;
    if (const size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw UserError(flag + " needs a value (see --help)");
      return argv[++i];
    };
    auto no_value = [&] {
      if (has_value) throw UserError(flag + " takes no value (see --help)");
    };
    if (flag == "--plugin") {
      o.plugins.push_back(take());
    } else if (flag == "--filter") {
      o.filter = take();
    } else if (flag == "--out") {
      o.out = take();
      if (o.out.empty()) throw UserError("--out needs a file path");
    } else if (flag == "--count-warmup") {
      o.count_options.warmup = ParsePositive(flag, take());
    } else if (flag == "--count-ops") {
      o.count_options.ops = ParsePositive(flag, take());
    } else if (flag == "--force-count-ops") {
      no_value();
      o.count_options.force = true;
    } else if (flag == "--against") {
      o.paired.against = take();
      if (o.paired.against.empty()) throw UserError("--against needs a plugin path");
    } else if (flag == "--paired-time") {
      o.paired.budget_s = ParseSeconds(flag, take());
    } else if (flag == "--paired-sessions") {
      o.paired.sessions = static_cast<int>(std::min<int64_t>(ParsePositive(flag, take()), 1000));
    } else if (flag == "--batch-time") {
      o.paired.batch_s = ParseSeconds(flag, take());
    } else if (flag == "--repetitions") {
      o.time_options.repetitions = static_cast<int>(ParsePositive(flag, take()));
    } else if (flag == "--min-time") {
      o.time_options.min_time_s = ParseSeconds(flag, take());
    } else if (flag == "--instance-timeout") {
      o.instance_timeout_s = ParseSeconds(flag, take());
    } else if (flag == "--instructions") {
      no_value();
      o.instructions = true;
    } else if (flag == "--estimated-cycles") {
      no_value();
      o.estimated_cycles = true;
    } else if (flag == "--callgrind-dumps") {  // internal: see instructions_pass.cc
      o.callgrind_dumps = take();
      o.count_options.callgrind = true;
    } else if (flag == "--no-isolation") {
      no_value();
      o.isolate = false;
    } else if (flag == "--context") {
      const std::string kv = take();
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw UserError("--context expects KEY=VALUE, not '" + kv + "'");
      }
      o.context.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else if (flag == "--list") {
      no_value();
      o.list = true;
    } else if (flag == "--no-count") {
      no_value();
      o.count = false;
    } else if (flag == "--no-time") {
      no_value();
      o.time = false;
    } else if (flag == "--quiet") {
      no_value();
      o.quiet = true;
    } else if (flag == "--help" || flag == "-h") {
      o.help = true;
    } else {
      throw UserError("unknown flag '" + flag + "' (see --help)");
    }
  }
  if (!o.count && !o.time && !o.instructions && !o.list && !o.help) {
    throw UserError("--no-count and --no-time together leave nothing to measure; drop one");
  }
  if (!o.paired.against.empty()) {
    if (o.plugins.size() != 1) {
      throw UserError(
          "--against compares two builds: give the base build as exactly one "
          "--plugin PATH (" +
          std::to_string(o.plugins.size()) + " given)");
    }
    if (o.instructions || !o.count || !o.time) {
      throw UserError(
          "--against runs only the paired time pass: drop --instructions, "
          "--no-count and --no-time (measure counts in a run of their own)");
    }
    o.count = false;
    o.paired.hang_s = 0.9 * o.instance_timeout_s;
  }
  if (o.estimated_cycles && !o.instructions) {
    throw UserError("--estimated-cycles needs --instructions (it is part of that pass); add it");
  }
  return o;
}

}  // namespace allocbench
