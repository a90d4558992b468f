#include "isolation.h"

#include <cxxabi.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <typeinfo>

#include "child_process.h"
#include "measure.h"
#include "paired_pass.h"
#include "results_json.h"
#include "signals.h"
#include "text.h"
#include "user_error.h"

namespace allocbench {
namespace {

using nlohmann::json;

// Messages from a measuring child.
constexpr char kPass = 'P';     // a pass starts: "count", "time"
constexpr char kResult = 'R';   // the instance's results entry so far, as one line of JSON
constexpr char kThrew = 'E';    // an exception nobody caught, or std::terminate()
constexpr char kRefused = 'U';  // the plugin is refused: the UserError's text
constexpr char kDone = 'D';     // the instance ended normally

std::string TypeName(const std::type_info* type) {
  if (type == nullptr) return "an exception";
  int status = 0;
  char* demangled = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type->name();
  std::free(demangled);
  return name;
}

// Runs in the child when an exception escapes a scenario (on any thread) or a scenario calls
// std::terminate(), or a static constructor of a plugin throws while it loads: tells the parent
// what was thrown, then aborts as the default handler would.
[[noreturn]] void OnTerminate() {
  SendToParent(kThrew, json(DescribeUncaught()).dump());
  std::abort();
}

const std::string* g_loading = nullptr;  // the plugin LoadPluginHere() is loading

// In allocbench-run itself, while a plugin loads: the refusal, as for any other broken plugin.
[[noreturn]] void OnTerminateWhileLoading() {
  std::fprintf(stderr, "allocbench-run: error: %s\n",
               ForTerminal(ThrewWhileLoading(*g_loading, DescribeUncaught())).c_str());
  std::fflush(stderr);
  _exit(2);
}

// The text of a message the child sent as a JSON string (raw, should it be anything else).
std::string Text(const std::string& line) {
  const json value = json::parse(line, nullptr, false);
  return value.is_string() ? value.get<std::string>() : ValidUtf8(line);
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

std::string Processes(int n) { return std::to_string(n) + (n == 1 ? " process" : " processes"); }

// What ended the child, as the results' error says it.
std::string Fault(const ChildReport& report, const Options& options) {
  if (report.Got(kThrew)) {
    return Text(report.Last(kThrew)) + " (uncaught)";
  }
  if (report.channel_lost_errno != 0) {
    return "closed allocbench-run's report pipe (a close() of file descriptors it did not open, "
           "as a daemonizing agent does?), which could not be opened again (" +
           std::string(std::strerror(report.channel_lost_errno)) +
           "): what it measured after that is lost";
  }
  switch (report.end) {
    case ChildReport::End::kTimedOut:
      return "did not finish within " + Seconds(options.instance_timeout_s) +
             " s (--instance-timeout) and was killed";
    case ChildReport::End::kSignaled:
      return "crashed with " + SignalName(report.status) +
             (report.status == SIGKILL ? " (also what the kernel's OOM killer sends)" : "");
    case ChildReport::End::kExited:
      return "ended the process with exit status " + std::to_string(report.status) +
             " (a call to exit() or _exit() in the scenario?)";
    case ChildReport::End::kSignaledSupervisor:
      return "sent " + SignalName(report.status) +
             " to allocbench-run (a kill() of its parent, by the scenario or a process it "
             "started?) and was stopped";
    case ChildReport::End::kInterrupted:
      break;
  }
  return "was interrupted";
}

// What the probe of a plugin sent: the plugin and its instances (without their functions,
// which only a process that loads the plugin has).
Probed Described(const std::string& line) {
  const json d = json::parse(line);
  Probed out;
  out.plugin.path = d.at("path").get<std::string>();
  out.plugin.compiler = d.at("compiler").get<std::string>();
  out.plugin.build_flags = d.at("build_flags").get<std::string>();
  for (const json& i : d.at("instances")) {
    Instance inst;
    inst.name = i.at("name").get<std::string>();
    inst.scenario = i.at("scenario").get<std::string>();
    inst.args = i.at("args").get<std::vector<std::pair<std::string, int64_t>>>();
    for (const auto& arg : inst.args) inst.arg_values.push_back(arg.second);
    inst.threads = i.at("threads").get<int>();
    inst.plugin = out.plugin.path;
    inst.refusal = i.at("refusal").get<std::string>();
    out.instances.push_back(std::move(inst));
  }
  return out;
}

// Runs `body` (which sends kResult entries and then kDone) in a child; the last entry it sent,
// else `fallback`, with the fault that ended the child as its error.
json Supervised(const std::function<void()>& body, json fallback, const Instance& instance,
                const Options& options, bool* interrupted) {
  *interrupted = false;
  const ChildReport report = RunInChild(
      [&] {
        std::set_terminate(OnTerminate);
        body();
        SendToParent(kDone, "");
      },
      options.instance_timeout_s);
  if (report.end == ChildReport::End::kInterrupted) {
    *interrupted = true;
    return nullptr;
  }
  if (report.Got(kHarnessFailed)) {  // the harness, not the scenario: as without isolation
    throw std::runtime_error("measuring " + instance.name + ": " +
                             ValidUtf8(report.Last(kHarnessFailed)));
  }
  json result =
      report.Got(kResult) ? json::parse(report.Last(kResult), nullptr, false) : json(nullptr);
  const bool done = report.Got(kDone) && report.end == ChildReport::End::kExited &&
                    report.status == 0 && result.is_object();
  if (!result.is_object()) result = std::move(fallback);
  if (report.left_running > 0) {
    result["note"] = "left " + Processes(report.left_running) +
                     " running when it ended (a daemon or an agent it started?), killed then; "
                     "allocations in other processes are not counted";
  }
  if (done) return result;
  // The fault: keep what an earlier pass measured, say which pass died and how.
  const std::string pass = report.Got(kPass) ? report.Last(kPass) + " pass: " : "";
  result["error"] = pass + Fault(report, options);
  return result;
}

}  // namespace

std::string DescribeUncaught() {
  std::string what = "called std::terminate()";
  if (std::exception_ptr e = std::current_exception()) {
    const std::string type = TypeName(abi::__cxa_current_exception_type());
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      what = "threw " + type + ": " + ex.what();
    } catch (...) {
      what = "threw " + type;
    }
  }
  return ValidUtf8(what);
}

std::string ThrewWhileLoading(const std::string& path, const std::string& what) {
  return "--plugin '" + path + "': a static constructor " + what +
         " (uncaught) while the plugin loaded; catch it in the plugin, or give it what it needs";
}

json MeasureIsolated(const Instance& instance, const Options& options, const std::string& allocator,
                     bool* interrupted) {
  return Supervised(
      [&] {
        MeasureHooks hooks;
        hooks.starting = [](const char* pass) { SendToParent(kPass, pass); };
        hooks.measured = [&](const InstanceResult& r) {
          SendToParent(kResult, Dump(ResultToJson(r, allocator)));
        };
        SendToParent(kResult, Dump(ResultToJson(Measure(instance, options, hooks), allocator)));
      },
      ResultToJson(InstanceResult{instance, std::nullopt, std::nullopt, {}, "", std::nullopt},
                   allocator),
      instance, options, interrupted);
}

json MeasurePairedIsolated(const Instance& instance, const Options& options,
                           const std::string& allocator, bool* interrupted) {
  const std::string base = options.plugins.front();
  return Supervised(
      [&] {
        SendToParent(kPass, "paired time");
        SendToParent(kResult, Dump(RunPaired(instance, base, options.paired, allocator)));
      },
      PairedEntry(instance, allocator), instance, options, interrupted);
}

Probed ProbePlugin(const std::string& path, double timeout_s) {
  const ChildReport report = RunInChild(
      [&] {
        std::set_terminate(OnTerminate);
        try {
          const Plugin plugin = LoadPlugin(path);
          json described = {{"path", plugin.path},
                            {"compiler", plugin.compiler},
                            {"build_flags", plugin.build_flags},
                            {"instances", json::array()}};
          for (const Instance& i : ExpandInstances({plugin})) {
            described["instances"].push_back({{"name", i.name},
                                              {"scenario", i.scenario},
                                              {"args", i.args},
                                              {"threads", i.threads},
                                              {"refusal", i.refusal}});
          }
          SendToParent(kDone, Dump(described));
        } catch (const UserError& e) {
          SendToParent(kRefused, json(ValidUtf8(e.what())).dump());
        }
      },
      timeout_s);
  if (report.Got(kDone)) return Described(report.Last(kDone));
  if (report.Got(kHarnessFailed)) {
    throw std::runtime_error("loading " + path + ": " + ValidUtf8(report.Last(kHarnessFailed)));
  }
  if (report.Got(kRefused)) throw UserError(Text(report.Last(kRefused)));
  if (report.Got(kThrew)) throw UserError(ThrewWhileLoading(path, Text(report.Last(kThrew))));
  std::string why;
  switch (report.end) {
    case ChildReport::End::kSignaled:
      why = "crashed while loading with " + SignalName(report.status) +
            "; is the file complete? rebuild the plugin";
      break;
    case ChildReport::End::kTimedOut:
      why = "did not finish loading within " + Seconds(timeout_s) + " s (--instance-timeout)";
      break;
    case ChildReport::End::kInterrupted:
      throw UserError("interrupted while loading plugins");
    case ChildReport::End::kSignaledSupervisor:
      why = "sent " + SignalName(report.status) +
            " to allocbench-run while loading (a static constructor of the plugin signals its "
            "parent?)";
      break;
    case ChildReport::End::kExited:
      why = "ended the process while loading (exit status " + std::to_string(report.status) +
            "); a static constructor of the plugin calls exit()?";
      break;
  }
  throw UserError("--plugin '" + path + "': " + why);
}

Plugin LoadPluginHere(const std::string& path) {
  g_loading = &path;
  const std::terminate_handler before = std::set_terminate(OnTerminateWhileLoading);
  Plugin plugin = LoadPlugin(path);
  std::set_terminate(before);
  g_loading = nullptr;
  return plugin;
}

}  // namespace allocbench
