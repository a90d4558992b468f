#include "stacks.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>

extern char** environ;

namespace allocbench::testing::internal {
namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool StartsWith(const std::string& s, const char* prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

std::string Demangle(const char* name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && demangled != nullptr ? demangled : name;
  std::free(demangled);
  return result;
}

std::string ExecutablePath() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

// Runs `argv` and returns its standard output; "" when it cannot be run or fails.
std::string Output(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string out;
  if (spawned == 0) {
    char buffer[4096];
    ssize_t n = 0;
    while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) out.append(buffer, n);
  }
  close(pipe_fds[0]);
  if (spawned != 0) return "";
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : "";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool IsAddressLine(const std::string& line) {
  if (line.size() < 3 || !StartsWith(line, "0x")) return false;
  return line.find_first_not_of("0123456789abcdef", 2) == std::string::npos;
}

// "dir/naming.cc:41 (discriminator 2)" -> naming.cc, 41; "??:0" or "??:?" -> "", 0.
void SetFileLine(const std::string& text, Frame* frame) {
  std::string location = text.substr(0, text.find(' '));
  const size_t colon = location.rfind(':');
  if (colon == std::string::npos || StartsWith(location, "??")) return;
  frame->path = location.substr(0, colon);
  frame->file = BaseName(frame->path);
  frame->line = std::atoi(location.c_str() + colon + 1);
  if (frame->line == 0) frame->file.clear(), frame->path.clear();
}

struct Module {
  std::string path;
  std::vector<uintptr_t> offsets;  // in the module's own addresses (load bias removed)
};

// addr2line -i for one module: each address to its inline chain, innermost first.
std::map<uintptr_t, std::vector<Frame>> Addr2line(const Module& module) {
  std::vector<std::string> argv = {"addr2line", "-a", "-f", "-C", "-i", "-e", module.path};
  for (uintptr_t offset : module.offsets) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), "0x%lx", static_cast<unsigned long>(offset));
    argv.push_back(hex);
  }
  std::map<uintptr_t, std::vector<Frame>> chains;
  const std::vector<std::string> lines = Lines(Output(argv));
  std::vector<Frame>* chain = nullptr;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (IsAddressLine(lines[i])) {
      chain = &chains[std::strtoull(lines[i].c_str(), nullptr, 16)];
      continue;
    }
    if (chain == nullptr || i + 1 >= lines.size()) break;
    Frame frame;
    frame.function = lines[i] == "??" ? "" : lines[i];
    SetFileLine(lines[++i], &frame);
    chain->push_back(frame);
  }
  return chains;
}

// Each distinct return address of the recorder's events, symbolised.
std::map<void*, std::vector<Frame>> Symbolize(const Recorder& recorder) {
  std::set<void*> addresses;
  for (int i = 0; i < recorder.events(); ++i) {
    const Event& event = recorder.event(i);
    addresses.insert(event.frames, event.frames + event.depth);
  }
  const std::string executable = ExecutablePath();
  std::map<std::string, Module> modules;
  std::map<void*, std::pair<std::string, uintptr_t>> where;  // address -> module, offset
  std::map<void*, std::vector<Frame>> symbols;
  for (void* address : addresses) {
    // A return address: the call is the byte before it.
    void* call = static_cast<char*>(address) - 1;
    Dl_info info;
    link_map* map = nullptr;
    Frame fallback;
    if (dladdr1(call, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0 ||
        map == nullptr) {
      symbols[address] = {fallback};
      continue;
    }
    const std::string path = map->l_name[0] == '\0' ? executable : map->l_name;
    const uintptr_t offset = reinterpret_cast<uintptr_t>(call) - map->l_addr;
    char hex[32];
    std::snprintf(hex, sizeof(hex), "+0x%lx", static_cast<unsigned long>(offset));
    fallback.module = BaseName(path) + hex;
    if (info.dli_sname != nullptr) fallback.function = Demangle(info.dli_sname);
    symbols[address] = {fallback};
    modules[path].path = path;
    modules[path].offsets.push_back(offset);
    where[address] = {path, offset};
  }
  for (const auto& [path, module] : modules) {
    const std::map<uintptr_t, std::vector<Frame>> chains = Addr2line(module);
    for (auto& [address, place] : where) {
      if (place.first != path) continue;
      const auto found = chains.find(place.second);
      if (found == chains.end() || found->second.empty()) continue;
      std::vector<Frame> chain = found->second;
      const Frame& fallback = symbols[address].front();
      for (Frame& frame : chain) {
        frame.module = fallback.module;
        if (frame.function.empty()) frame.function = fallback.function;
      }
      symbols[address] = std::move(chain);
    }
  }
  return symbols;
}

// Where the qualified name of a demangled function is: [first, second) of
// "void ns::f<int>(int) const" is "ns::f<int>"; second is at its parameters, if any.
std::pair<size_t, size_t> NameSpan(const std::string& demangled) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < demangled.size(); ++i) {
    const char c = demangled[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (depth != 0) continue;
    // "(anonymous namespace)" and "{lambda()#1}" are parts of names, not parameter lists.
    if (demangled.compare(i, 21, "(anonymous namespace)") == 0) {
      i += 20;
    } else if (c == '{') {
      const size_t close = demangled.find('}', i);
      if (close == std::string::npos) break;
      i = close;
    } else if (c == '(') {
      return {start, i};
    } else if (c == ' ' && !(i >= 8 && demangled.compare(i - 8, 8, "operator") == 0)) {
      start = i + 1;  // what came before was a return type
    }
  }
  return {start, demangled.size()};
}

std::string QualifiedName(const std::string& demangled) {
  const auto [first, second] = NameSpan(demangled);
  return demangled.substr(first, second - first);
}

// Code that is the allocation machinery, not the program: the C and C++ runtimes (and the
// headers of the C++ library, inlined into the program), allocbench's hooks and checks. By the
// file where debug info names one: inlined frames carry only short names ("_M_create",
// "operator()"), and addr2line may give an inlined frame its enclosing symbol's name.
bool IsMachinery(const Frame& frame) {
  static const char* const kModules[] = {"libc.so",        "libstdc++.so", "libgcc_s.so",
                                         "ld-linux",       "libm.so",      "libjemalloc.so",
                                         "libmimalloc.so", "libtcmalloc"};
  for (const char* module : kModules) {
    if (StartsWith(frame.module, module)) return true;
  }
  if (!frame.path.empty()) {
    static const char* const kFiles[] = {"hooks_malloc.cc", "hooks_new.cc",    "hooks_common.h",
                                         "thread_state.h",  "counters.cc",     "recorder.cc",
                                         "window.cc",       "verdict.cc",      "testing.h",
                                         "testing_gtest.h", "testing_catch2.h"};
    for (const char* file : kFiles) {
      if (frame.file == file) return true;
    }
    return StartsWith(frame.path, "/usr/include/") || frame.path.find("/c++/") != std::string::npos;
  }
  const std::string name = QualifiedName(frame.function);
  static const char* const kPrefixes[] = {"allocbench::",   "std::",  "__gnu_cxx::",
                                          "__cxxabiv1::",   "__cxa_", "operator new",
                                          "operator delete"};
  for (const char* prefix : kPrefixes) {
    if (StartsWith(name, prefix)) return true;
  }
  static const char* const kFunctions[] = {
      "malloc",   "calloc", "realloc", "reallocarray", "free",    "posix_memalign", "aligned_alloc",
      "memalign", "valloc", "pvalloc", "strdup",       "strndup", "backtrace"};
  for (const char* function : kFunctions) {
    if (name == function) return true;
  }
  return false;
}

}  // namespace

std::string ShortName(const std::string& demangled) {
  const auto [first, second] = NameSpan(demangled);
  std::string name = demangled.substr(first, second - first);
  // ABI tags ("[abi:cxx11]", on functions returning std::string) are the linker's business.
  for (size_t tag = name.find("[abi:"); tag != std::string::npos; tag = name.find("[abi:")) {
    const size_t end = name.find(']', tag);
    if (end == std::string::npos) break;
    name.erase(tag, end - tag + 1);
  }
  if (demangled.compare(second, 2, "()") == 0) return name + "()";
  if (second < demangled.size()) return name + "(...)";
  return name;
}

std::vector<std::vector<Frame>> ProgramFrames(const Recorder& recorder) {
  const std::map<void*, std::vector<Frame>> symbols = Symbolize(recorder);
  std::vector<std::vector<Frame>> stacks;
  for (int i = 0; i < recorder.events(); ++i) {
    const Event& event = recorder.event(i);
    std::vector<Frame> frames;
    for (int f = 0; f < event.depth; ++f) {
      for (const Frame& frame : symbols.at(event.frames[f])) frames.push_back(frame);
    }
    // The capture, the hooks, libstdc++ and the check's own frames are not the program's.
    std::vector<Frame> program;
    for (const Frame& frame : frames) {
      if (IsMachinery(frame)) continue;
      program.push_back(frame);
      // Kept by its file, named after allocbench's own symbol: the name is not the program's.
      if (StartsWith(QualifiedName(frame.function), "allocbench::"))
        program.back().function.clear();
    }
    stacks.push_back(std::move(program));
  }
  return stacks;
}

}  // namespace allocbench::testing::internal
