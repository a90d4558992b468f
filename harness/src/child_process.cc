#include "child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "descendants.h"
#include "signals.h"

namespace allocbench {
namespace {

constexpr int kPollSliceMs = 100;

double Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

[[noreturn]] void ChildMain(const std::function<void()>& body) {
  // An exception must not unwind into the parent's code (main() would report an internal error
  // from the child and go on running the rest of the run there).
  try {
    body();
  } catch (const std::exception& e) {
    std::string what = e.what();
    for (char& c : what) c = c == '\n' ? ' ' : c;  // one message is one line
    SendToParent(kHarnessFailed, what);
    std::fflush(nullptr);
    _exit(3);
  }
  std::fflush(nullptr);  // the scenario's own output; the parent flushed before the fork
  _exit(0);
}

// In the child, before the body: dies with the parent, even if the parent is SIGKILLed (the
// check closes the race with a parent that died before prctl), in a process group of its own.
void BecomeChild(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  setpgid(0, 0);
  RestoreDefaultSignals();
  // In its own process group the child is "background" to the terminal; with `stty tostop` a
  // write to the terminal would stop it instead of printing.
  std::signal(SIGTTOU, SIG_IGN);
}

// Splits complete lines off `buffer` into messages.
void TakeLines(std::string& buffer, ChildReport& report) {
  size_t start = 0;
  for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
    if (nl - start >= 2) {
      report.messages.emplace_back(buffer[start], buffer.substr(start + 2, nl - start - 2));
    } else if (nl - start == 1) {
      report.messages.emplace_back(buffer[start], "");
    }
  }
  buffer.erase(0, start);
}

void Reap(pid_t pid, ChildReport& report) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (report.end != ChildReport::End::kExited) return;  // we killed it, and the end says why
  if (WIFSIGNALED(status)) {
    report.end = ChildReport::End::kSignaled;
    report.status = WTERMSIG(status);
  } else {
    report.end = ChildReport::End::kExited;
    report.status = WEXITSTATUS(status);
  }
}

// True once the child has ended (without reaping it, so its pid and process group id cannot be
// reused while we clean up after it).
bool HasEnded(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

}  // namespace

std::string ChildReport::Last(char kind) const {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (it->first == kind) return it->second;
  }
  return "";
}

bool ChildReport::Got(char kind) const {
  for (const auto& m : messages) {
    if (m.first == kind) return true;
  }
  return false;
}

ChildReport RunInChild(const std::function<void()>& body, double timeout_s) {
  BecomeSubreaper();
  TakeSignalFromDescendant();  // one from a process of an earlier child is not this one's fault
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    std::perror("allocbench-run: pipe");
    std::exit(3);
  }
  void* shared = mmap(nullptr, sizeof(ChannelState), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    std::perror("allocbench-run: mmap");
    std::exit(3);
  }
  auto* state = new (shared) ChannelState{0};
  // Processes of our own (a plugin's static constructor may start one): not the child's.
  const std::vector<pid_t> ours = Children();
  std::fflush(nullptr);  // else the child's exit would print our buffered output a second time
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("allocbench-run: fork");
    std::exit(3);
  }
  if (pid == 0) {
    BecomeChild(parent);
    OpenChannel(fds[1], parent, fds[0], state);
    ChildMain(body);
  }
  close(fds[1]);
  setpgid(pid, pid);  // also here: whichever of the two runs first, the group exists

  ChildReport report;
  const double deadline = timeout_s > 0 ? Now() + timeout_s : 0;
  std::string buffer;
  bool writers = true;  // false once read() found every write end closed
  int pause_ms = 1;
  // Reads what is there within `wait_ms`; true if it read something.
  const auto read_some = [&](int wait_ms) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, wait_ms) <= 0) return false;
    char chunk[65536];
    const ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n > 0) {
      buffer.append(chunk, static_cast<size_t>(n));
      TakeLines(buffer, report);
      return true;
    }
    if (n == 0 || errno != EINTR) writers = false;
    return false;
  };
  for (;;) {
    if (Interrupted()) {
      report.end = ChildReport::End::kInterrupted;
    } else if (const int signal_number = TakeSignalFromDescendant()) {
      report.end = ChildReport::End::kSignaledSupervisor;
      report.status = signal_number;
    } else if (deadline > 0 && Now() >= deadline) {
      report.end = ChildReport::End::kTimedOut;
    }
    if (report.end != ChildReport::End::kExited) break;
    if (writers && read_some(kPollSliceMs)) {
      pause_ms = 1;
      continue;
    }
    // A grandchild may keep the pipe open after the child ended: the child's end decides.
    if (HasEnded(pid)) break;
    if (!writers) {
      // Every write end is closed, yet the child runs: it is exiting (soon a zombie), or its
      // body closed its descriptors and opens the pipe again for its next message. Look again
      // after a pause that grows to a poll slice.
      poll(nullptr, 0, pause_ms);
      pause_ms = std::min(2 * pause_ms, kPollSliceMs);
      writers = true;
    }
  }
  // What the child sent before it ended or we stopped it (a signal it sent us can arrive before
  // the message it sent first). Bounded: a process of the child's could write for ever.
  for (int reads = 0; reads < 1024 && read_some(0); ++reads) {
  }
  close(fds[0]);
  if (report.end == ChildReport::End::kExited) {
    std::vector<pid_t> not_left = ours;
    not_left.push_back(pid);
    report.left_running = RunningDescendants(not_left);
  }
  // Whatever the child left running in its group (a grandchild, or the child itself after a
  // time-out) goes; the child is not reaped yet, so the group id is still its own. Then what
  // left the group (setsid()), now ours as its subreaper.
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  Reap(pid, report);
  KillAndReapChildren(ours);
  report.channel_lost_errno = state->lost_errno;
  munmap(shared, sizeof(ChannelState));
  return report;
}

}  // namespace allocbench
