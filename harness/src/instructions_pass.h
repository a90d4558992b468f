// The instructions pass (--instructions): allocbench-run runs itself once more under valgrind's
// callgrind, with collection off (--collect-atstart=no) and address-space randomization off
// where the system allows it, on the same plugins and the instances that have not failed
// natively (those keep their native error), with the time pass off. That inner run's count
// pass switches collection on exactly where it counts (callgrind.h), so instructions_per_op
// comes from the same warm-up and windows as bytes_per_op. Each instance
// still runs in a child process of its own, under --instance-timeout; one that crashes or times
// out under valgrind is a failed instance ("instructions pass: …") and the others go on.
#ifndef ALLOCBENCH_HARNESS_INSTRUCTIONS_PASS_H_
#define ALLOCBENCH_HARNESS_INSTRUCTIONS_PASS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "options.h"

namespace allocbench {

// valgrind's version ("valgrind-3.19.0"); throws UserError if it cannot be run.
std::string ValgrindVersion();

// Runs the pass for the instances of `results` without an error (already measured by the other
// passes, or entries without sections under --no-count --no-time) and adds each one's
// `instructions` section, or its error; sets context.instructions. False if a SIGINT or SIGTERM
// stopped it.
bool RunInstructionsPass(const Options& options, const std::vector<std::string>& plugins,
                         const std::string& valgrind_version, nlohmann::json& context,
                         nlohmann::json& results);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_INSTRUCTIONS_PASS_H_
