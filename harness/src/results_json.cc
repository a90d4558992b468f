#include "results_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "fields.h"
#include "user_error.h"

namespace allocbench {
namespace {

using nlohmann::json;

json CountersToJson(const counting::Counters& c) {
  return {{"allocs", c.allocs},
          {"frees", c.frees},
          {"requested_bytes", c.requested_bytes},
          {"usable_bytes", c.usable_bytes}};
}

void AddFields(json& section, const InstanceResult& r, Section which) {
  for (const Field& f : kFields) {
    if (f.section != which) continue;
    const auto value = f.get(r);
    if (!value) continue;
    // Counts are exact: 206, not 206.0, when the per-op value is a whole number.
    const bool whole =
        which != Section::kTime && std::floor(*value) == *value && std::fabs(*value) < 9.0e15;
    section[f.key] = whole ? json(static_cast<int64_t>(*value)) : json(*value);
  }
}

std::string TempPathFor(const std::string& path) {
  return path + ".tmp." + std::to_string(getpid());
}

// A rename would replace whatever `path` is: only a regular file (or nothing) may be there.
void CheckRegularOrAbsent(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return;
  const char* what = S_ISLNK(st.st_mode)    ? "a symbolic link"
                     : S_ISDIR(st.st_mode)  ? "a directory"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : nullptr;
  if (what != nullptr) {
    throw UserError("cannot write '" + path + "': it is " + what +
                    ", and allocbench-run writes only regular files; choose another --out path");
  }
}

}  // namespace

void FailWrite(const std::string& path, const char* what, int err) {
  throw UserError("cannot write '" + path + "' (" + what + ": " + std::strerror(err) +
                  "); choose a writable --out path");
}

json ResultToJson(const InstanceResult& r, const std::string& allocator) {
  json out = {{"name", r.instance.name}, {"scenario", r.instance.scenario},
              {"args", json::object()},  {"threads", r.instance.threads},
              {"allocator", allocator},  {"plugin", r.instance.plugin},
              {"alloc", nullptr},        {"time", nullptr},
              {"instructions", nullptr}};
  for (const auto& [key, value] : r.instance.args) out["args"][key] = value;
  if (r.alloc) {
    const AllocMetrics& a = *r.alloc;
    json alloc = {{"warmup_ops", a.warmup_ops},
                  {"window_ops", a.window_ops},
                  {"steady", a.steady},
                  {"windows", {CountersToJson(a.windows[0]), CountersToJson(a.windows[1])}}};
    if (!a.steady) alloc["steady_reason"] = a.steady_reason;
    AddFields(alloc, r, Section::kAlloc);
    out["alloc"] = std::move(alloc);
  }
  if (r.time) {
    const TimeMetrics& t = *r.time;
    json time = {{"unit", "ns"},
                 {"repetitions", t.repetitions},
                 {"min_time_s", t.min_time_s},
                 {"samples_ns_per_op", t.samples_ns},
                 {"samples_cpu_ns_per_op", t.cpu_samples_ns},
                 {"iterations", t.iterations},
                 {"min_ns_per_op", t.min_ns},
                 {"max_ns_per_op", t.max_ns}};
    AddFields(time, r, Section::kTime);
    out["time"] = std::move(time);
  }
  if (r.instructions) {
    const InstructionMetrics& m = *r.instructions;
    json instructions = {{"window_ops", m.window_ops},
                         {"steady", m.steady},
                         {"windows", {m.windows[0], m.windows[1]}}};
    if (!m.steady) instructions["steady_reason"] = m.steady_reason;
    AddFields(instructions, r, Section::kInstructions);
    out["instructions"] = std::move(instructions);
  }
  if (!r.counters.empty()) {
    json counters = json::object();
    for (const Counter& c : r.counters) counters[c.name] = {{"value", c.value}, {"unit", c.unit}};
    out["counters"] = std::move(counters);
  }
  if (!r.error.empty()) out["error"] = r.error;
  return out;
}

json ResultsDocument(const json& context, const json& results, bool complete) {
  json fields = json::array();
  for (const Field& f : kFields) {
    fields.push_back({{"key", f.key},
                      {"section", SectionName(f.section)},
                      {"unit", f.unit},
                      {"gate", GateName(f.gate)},
                      {"column", f.column ? json(f.column) : json(nullptr)},
                      {"help", f.help}});
  }
  return {{"schema_version", kResultsSchemaVersion},
          {"complete", complete},
          {"context", context},
          {"fields", std::move(fields)},
          {"results", results}};
}

std::string Dump(const json& value, int indent) {
  // Text from plugins is made valid UTF-8 where it enters; `replace` is the last line of defence.
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

void WriteFileAtomically(const std::string& path, const std::string& content) {
  CheckRegularOrAbsent(path);
  const std::string temp = TempPathFor(path);
  // O_EXCL | O_NOFOLLOW: a file or link planted at the temporary name is never written through.
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) FailWrite(path, "create", errno);
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      close(fd);
      unlink(temp.c_str());
      FailWrite(path, "write", err);
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    FailWrite(path, "sync", err);
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    FailWrite(path, "rename", err);
  }
}

void CheckWritable(const std::string& path) {
  CheckRegularOrAbsent(path);
  const std::string temp = TempPathFor(path);
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) FailWrite(path, "create", errno);
  close(fd);
  unlink(temp.c_str());
}

}  // namespace allocbench
