#include "isolation.h"

#include <cxxabi.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <typeinfo>

#include "child_process.h"
#include "measure.h"
#include "results_json.h"
#include "signals.h"
#include "text.h"
#include "user_error.h"

namespace allocbench {
namespace {

using nlohmann::json;

// Messages from a measuring child.
constexpr char kPass = 'P';    // a pass starts: "count", "time"
constexpr char kResult = 'R';  // the instance's results entry so far, as one line of JSON
constexpr char kThrew = 'E';   // an exception nobody caught, or std::terminate()
constexpr char kDone = 'D';    // the instance ended normally

int g_report_fd = -1;  // the child's end of the pipe, for the terminate handler

std::string TypeName(const std::type_info* type) {
  if (type == nullptr) return "an exception";
  int status = 0;
  char* demangled = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type->name();
  std::free(demangled);
  return name;
}

// Runs in the child when an exception escapes a scenario (on any thread) or a scenario calls
// std::terminate(): tells the parent what was thrown, then aborts as the default handler would.
[[noreturn]] void OnTerminate() {
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
  SendToParent(g_report_fd, kThrew, json(ValidUtf8(what)).dump());
  std::abort();
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

// What ended the child, as the results' error says it.
std::string Fault(const ChildReport& report, const Options& options) {
  if (report.Got(kThrew)) {
    return Text(report.Last(kThrew)) + " (uncaught)";
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
    case ChildReport::End::kInterrupted:
      break;
  }
  return "was interrupted";
}

}  // namespace

json MeasureIsolated(const Instance& instance, const Options& options, const std::string& allocator,
                     bool* interrupted) {
  *interrupted = false;
  const ChildReport report = RunInChild(
      [&](int fd) {
        g_report_fd = fd;
        std::set_terminate(OnTerminate);
        MeasureHooks hooks;
        hooks.starting = [fd](const char* pass) { SendToParent(fd, kPass, pass); };
        hooks.measured = [&](const InstanceResult& r) {
          SendToParent(fd, kResult, Dump(ResultToJson(r, allocator)));
        };
        SendToParent(fd, kResult, Dump(ResultToJson(Measure(instance, options, hooks), allocator)));
        SendToParent(fd, kDone, "");
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
  if (report.Got(kDone) && report.end == ChildReport::End::kExited && report.status == 0 &&
      result.is_object()) {
    return result;
  }
  // The fault: keep what an earlier pass measured, say which pass died and how.
  if (!result.is_object()) {
    result = ResultToJson(
        InstanceResult{instance, std::nullopt, std::nullopt, {}, "", std::nullopt}, allocator);
  }
  const std::string pass = report.Got(kPass) ? report.Last(kPass) + " pass: " : "";
  result["error"] = pass + Fault(report, options);
  return result;
}

void ProbePlugin(const std::string& path, double timeout_s) {
  const ChildReport report = RunInChild(
      [&](int fd) {
        try {
          ExpandInstances({LoadPlugin(path)});
          SendToParent(fd, kDone, "");
        } catch (const UserError& e) {
          SendToParent(fd, kThrew, json(ValidUtf8(e.what())).dump());
        }
      },
      timeout_s);
  if (report.Got(kDone)) return;
  if (report.Got(kHarnessFailed)) {
    throw std::runtime_error("loading " + path + ": " + ValidUtf8(report.Last(kHarnessFailed)));
  }
  if (report.Got(kThrew)) {
    throw UserError(Text(report.Last(kThrew)));
  }
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
    case ChildReport::End::kExited:
      why = "ended the process while loading (exit status " + std::to_string(report.status) +
            "); a static constructor of the plugin calls exit()?";
      break;
  }
  throw UserError("--plugin '" + path + "': " + why);
}

}  // namespace allocbench
