#include "child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "signals.h"

namespace allocbench {
namespace {

constexpr int kPollSliceMs = 100;

double Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void WriteAll(int fd, const char* data, size_t length) {
  while (length > 0) {
    const ssize_t n = write(fd, data, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nothing left to tell
    data += n;
    length -= static_cast<size_t>(n);
  }
}

[[noreturn]] void ChildMain(int fd, pid_t parent, const std::function<void(int)>& body) {
  // Dies with the parent, even if the parent is SIGKILLed; the check closes the race with a
  // parent that died before prctl.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  setpgid(0, 0);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  // In its own process group the child is "background" to the terminal; with `stty tostop` a
  // write to the terminal would stop it instead of printing.
  std::signal(SIGTTOU, SIG_IGN);
  // An exception must not unwind into the parent's code (main() would report an internal error
  // from the child and go on running the rest of the run there).
  try {
    body(fd);
  } catch (const std::exception& e) {
    std::string what = e.what();
    for (char& c : what) c = c == '\n' ? ' ' : c;  // one message is one line
    SendToParent(fd, kHarnessFailed, what);
    std::fflush(nullptr);
    _exit(3);
  }
  std::fflush(nullptr);  // the scenario's own output; the parent flushed before the fork
  _exit(0);
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
  if (report.end == ChildReport::End::kTimedOut || report.end == ChildReport::End::kInterrupted) {
    return;
  }
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

void SendToParent(int fd, char kind, const char* text, size_t length) {
  const char head[2] = {kind, ' '};
  WriteAll(fd, head, 2);
  WriteAll(fd, text, length);
  WriteAll(fd, "\n", 1);
}

void SendToParent(int fd, char kind, const std::string& text) {
  SendToParent(fd, kind, text.data(), text.size());
}

ChildReport RunInChild(const std::function<void(int fd)>& body, double timeout_s) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    std::perror("allocbench-run: pipe");
    std::exit(3);
  }
  std::fflush(nullptr);  // else the child's exit would print our buffered output a second time
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("allocbench-run: fork");
    std::exit(3);
  }
  if (pid == 0) {
    close(fds[0]);
    ChildMain(fds[1], parent, body);
  }
  close(fds[1]);
  setpgid(pid, pid);  // also here: whichever of the two runs first, the group exists

  ChildReport report;
  const double deadline = timeout_s > 0 ? Now() + timeout_s : 0;
  std::string buffer;
  bool reading = true;
  // Reads what is there; false once the pipe is closed (the child's end, and every copy a
  // grandchild inherited).
  const auto read_some = [&](int wait_ms) {
    pollfd p{fds[0], POLLIN, 0};
    if (!reading || poll(&p, 1, wait_ms) <= 0) return false;
    char chunk[65536];
    const ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n > 0) {
      buffer.append(chunk, static_cast<size_t>(n));
      TakeLines(buffer, report);
      return true;
    }
    if (n == 0 || errno != EINTR) reading = false;
    return false;
  };
  for (;;) {
    if (Interrupted()) report.end = ChildReport::End::kInterrupted;
    if (deadline > 0 && Now() >= deadline) report.end = ChildReport::End::kTimedOut;
    if (report.end != ChildReport::End::kExited) break;
    if (read_some(kPollSliceMs)) continue;
    // A grandchild may keep the pipe open after the child ended: the child's end decides.
    if (HasEnded(pid)) {
      while (read_some(0)) {
      }
      break;
    }
    if (!reading) poll(nullptr, 0, 1);  // the pipe closed as the child exits: soon a zombie
  }
  close(fds[0]);
  // Whatever the child left running in its group (a grandchild, or the child itself after a
  // time-out) goes; the child is not reaped yet, so the group id is still its own.
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  Reap(pid, report);
  return report;
}

}  // namespace allocbench
