#include "instructions_pass.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/personality.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "child_process.h"
#include "journal.h"
#include "signals.h"
#include "text.h"
#include "user_error.h"

namespace allocbench {
namespace {

using nlohmann::json;

constexpr char kMissing[] =
    "--instructions needs valgrind (its callgrind tool), which cannot be run here; install "
    "Debian's valgrind (apt-get install valgrind) or drop --instructions";

std::string SelfPath() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(self, static_cast<size_t>(n));
}

std::string Number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// A fresh private folder for callgrind's files, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/allocbench-callgrind.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      throw UserError("cannot create a folder for callgrind's files in " + pattern +
                      "; set TMPDIR to a writable folder");
    }
    path_ = pattern;
  }
  ~TempDir() {  // it holds files only: callgrind's dumps and the inner run's results
    if (DIR* d = opendir(path_.c_str())) {
      while (const dirent* entry = readdir(d)) {
        if (entry->d_name[0] != '.') unlink((path_ + "/" + entry->d_name).c_str());
      }
      closedir(d);
    }
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A --filter that matches exactly the instances of `results` still without an error, or "" if
// none is. One that failed in a native pass keeps that error, so it is not run again under
// valgrind, where a native hang would cost another --instance-timeout and a crash another core.
std::string StillToMeasure(const json& results, size_t* count) {
  std::string alternatives;
  *count = 0;
  for (const json& r : results) {
    if (r.contains("error")) continue;
    if (!alternatives.empty()) alternatives += '|';
    for (const char c : r.value("name", "")) {
      if (c != '\0' && std::strchr("\\^$.|?*+()[]{}", c) != nullptr) alternatives += '\\';
      alternatives += c;
    }
    ++*count;
  }
  return *count == 0 ? "" : "^(?:" + alternatives + ")$";
}

std::vector<std::string> InnerCommand(const Options& o, const std::vector<std::string>& plugins,
                                      const std::string& dir, const std::string& filter) {
  std::vector<std::string> argv = {"valgrind", "--quiet", "--tool=callgrind",
                                   "--collect-atstart=no",
                                   "--callgrind-out-file=" + dir + "/cg.%p"};
  if (o.estimated_cycles) argv.push_back("--cache-sim=yes");
  argv.insert(
      argv.end(),
      {SelfPath(), "--callgrind-dumps", dir + "/cg", "--no-time", "--out", dir + "/results.json",
       "--count-warmup", std::to_string(o.count_options.warmup), "--count-ops",
       std::to_string(o.count_options.ops), "--instance-timeout", Number(o.instance_timeout_s)});
  if (o.count_options.force) argv.push_back("--force-count-ops");
  if (!o.isolate) argv.push_back("--no-isolation");
  if (o.quiet) argv.push_back("--quiet");
  argv.insert(argv.end(), {"--filter", filter});
  for (const std::string& p : plugins) argv.insert(argv.end(), {"--plugin", p});
  return argv;
}

[[noreturn]] void Exec(const std::vector<std::string>& args) {
  // Addresses the same in every run, so address-keyed work repeats (not allowed everywhere:
  // then randomization stays on and context.instructions.aslr says so).
  const int current = personality(0xffffffff);
  if (current != -1) personality(static_cast<unsigned long>(current) | ADDR_NO_RANDOMIZE);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "allocbench-run: cannot run valgrind\n");
  _exit(127);
}

json ReadInner(const std::string& path) {
  const json done = ReadResults(path);
  return done.is_null() ? ReadResults(path + ".partial") : done;
}

std::string WhyNone(const ChildReport& report) {
  if (report.end == ChildReport::End::kSignaled) {
    return "valgrind ended with " + SignalName(report.status) + " before measuring it";
  }
  return "valgrind ended with exit status " + std::to_string(report.status) +
         " before measuring it; see its output above";
}

}  // namespace

std::string ValgrindVersion() {
  FILE* pipe = popen("valgrind --version 2>/dev/null", "r");
  if (pipe == nullptr) throw UserError(kMissing);
  char line[128] = "";
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  const int status = pclose(pipe);
  std::string version = got ? line : "";
  while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) {
    version.pop_back();
  }
  if (status != 0 || version.rfind("valgrind-", 0) != 0) throw UserError(kMissing);
  return version;
}

bool RunInstructionsPass(const Options& options, const std::vector<std::string>& plugins,
                         const std::string& valgrind_version, json& context, json& results) {
  const TempDir dir;
  size_t count = 0;
  const std::string filter = StillToMeasure(results, &count);
  if (!options.quiet) {
    std::fprintf(stderr, "instructions pass: %zu instance(s) under callgrind (%s)\n", count,
                 valgrind_version.c_str());
  }
  ChildReport report;
  json inner;
  if (count > 0) {
    const std::vector<std::string> command = InnerCommand(options, plugins, dir.path(), filter);
    report = RunInChild([&] { Exec(command); }, 0);
    if (report.end == ChildReport::End::kInterrupted) return false;
    inner = ReadInner(dir.path() + "/results.json");
  }
  std::map<std::string, json> by_name;
  if (inner.is_object()) {  // ReadInner checked that "results" is an array
    for (const json& r : inner.at("results")) {
      if (r.is_object() && r.contains("name") && r.at("name").is_string()) {
        by_name[r.at("name").get<std::string>()] = r;
      }
    }
  }
  for (json& r : results) {
    if (r.contains("error")) continue;  // failed already: nothing more to learn
    const auto it = by_name.find(r.value("name", ""));
    if (it == by_name.end()) {
      r["error"] = "instructions pass: " + WhyNone(report);
    } else if (it->second.contains("error")) {
      std::string error = it->second.value("error", "");
      if (error.rfind("count pass: ", 0) == 0) error = error.substr(12);
      r["error"] = "instructions pass: " + ValidUtf8(error) + " (under callgrind)";
    } else {
      r["instructions"] = it->second["instructions"];
    }
  }
  json settings = json::object();
  if (inner.is_object() && inner.contains("context") && inner.at("context").is_object()) {
    settings = inner.at("context").value("instructions", json::object());
    if (!settings.is_object()) settings = json::object();
  }
  settings["tool"] = "callgrind";
  settings["valgrind"] = valgrind_version;
  settings["estimated_cycles"] = options.estimated_cycles;
  settings["warmup_ops"] = options.count_options.warmup;
  settings["window_ops"] = options.count_options.ops;
  context["instructions"] = std::move(settings);
  return true;
}

}  // namespace allocbench
