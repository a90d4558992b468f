#include "descendants.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "proc_stat.h"

namespace allocbench {
namespace {

// A tree larger than this is not an instance's; the bound keeps a fork bomb from keeping us.
constexpr size_t kMaxProcesses = 100000;

// The children of every thread of `pid` (/proc/<pid>/task/<tid>/children).
std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> children;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return children;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream in(tasks + "/" + entry->d_name + "/children");
    for (long child; in >> child;) children.push_back(static_cast<pid_t>(child));
  }
  closedir(dir);
  return children;
}

bool Among(pid_t pid, const std::vector<pid_t>& pids) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

}  // namespace

std::vector<pid_t> Children() { return ChildrenOf(getpid()); }

void BecomeSubreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

int RunningDescendants(const std::vector<pid_t>& except) {
  int running = 0;
  std::vector<pid_t> pending = Children();
  for (size_t seen = 0; !pending.empty() && seen < kMaxProcesses; ++seen) {
    const pid_t pid = pending.back();
    pending.pop_back();
    ProcStat stat;
    if (Among(pid, except) || !ReadProcStat(pid, &stat) || stat.state == 'Z') continue;
    ++running;
    for (const pid_t child : ChildrenOf(pid)) pending.push_back(child);
  }
  return running;
}

void KillAndReapChildren(const std::vector<pid_t>& except) {
  // Only our own children are signalled: until we reap one, its pid cannot go to another
  // process. Reaping one makes its children ours, so round after round until none is left.
  for (size_t round = 0; round < kMaxProcesses; ++round) {
    std::vector<pid_t> children = Children();
    children.erase(std::remove_if(children.begin(), children.end(),
                                  [&](pid_t pid) { return Among(pid, except); }),
                   children.end());
    if (children.empty()) break;
    for (const pid_t pid : children) kill(pid, SIGKILL);
    for (const pid_t pid : children) {
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
}

}  // namespace allocbench
