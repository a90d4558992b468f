// Fault isolation: every instance is measured in a child process of its own, so one that
// crashes, aborts, throws, exits, hangs or signals allocbench-run is a failed instance with its
// reason and every other instance is still measured (DESIGN.md, "Faults"); processes it leaves
// running are killed and noted. Plugins are first loaded in a throw-away child too, so a plugin
// that crashes or throws while loading (a truncated file, a static constructor that faults) is
// refused with a message instead of ending the run.
#ifndef ALLOCBENCH_HARNESS_ISOLATION_H_
#define ALLOCBENCH_HARNESS_ISOLATION_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "options.h"
#include "plugin_loader.h"

namespace allocbench {

// The instance's entry of the results (see results_json.h), from a child process; a fault is
// its `error` ("count pass: crashed with SIGSEGV (Segmentation fault)"), with what an earlier
// pass measured kept. Sets *interrupted (and returns null) when a SIGINT or SIGTERM stopped it.
nlohmann::json MeasureIsolated(const Instance& instance, const Options& options,
                               const std::string& allocator, bool* interrupted);

// A plugin as a probe saw it: its path, compiler and flags, and its instances (no functions).
struct Probed {
  Plugin plugin;
  std::vector<Instance> instances;
};

// Loads `path` and reads its registrations in a throw-away child; throws UserError if that
// fails or crashes.
Probed ProbePlugin(const std::string& path, double timeout_s);

// The paired pass of one instance (paired_pass.h) in a child process of its own, as
// MeasureIsolated: its result entry, or null with *interrupted set.
nlohmann::json MeasurePairedIsolated(const Instance& instance, const Options& options,
                                     const std::string& allocator, bool* interrupted);

// LoadPlugin(path) in this process. An exception that a static constructor of the plugin throws
// cannot be caught (it reaches std::terminate() inside dlopen()): it ends the process with exit
// code 2 and the message a refused plugin gets.
Plugin LoadPluginHere(const std::string& path);

// In a terminate handler: what was thrown ("threw std::runtime_error: ..."), or that
// std::terminate() was called.
std::string DescribeUncaught();

// The refusal of a plugin whose static constructor threw: `what` is "threw <type>: <what()>".
std::string ThrewWhileLoading(const std::string& path, const std::string& what);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_ISOLATION_H_
