#include "signals.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include <atomic>
#include <csignal>

#include "proc_stat.h"

namespace allocbench {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
std::atomic<int> g_from_descendant{0};  // lock-free, so a handler may set it
bool g_isolating = false;
static_assert(std::atomic<int>::is_always_lock_free);

// The other signals that end a process by default and that a scenario may send its parent.
constexpr int kOtherEndingSignals[] = {SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};

// kill(), sigqueue() or tgkill() by a process whose parents lead back to us.
bool FromDescendant(const siginfo_t* info) {
  const bool sent =
      info->si_code == SI_USER || info->si_code == SI_QUEUE || info->si_code == SI_TKILL;
  return sent && IsDescendant(info->si_pid);
}

// A second Ctrl-C ends the process at once; SIGTERM stays handled, so that a parent that
// interrupts us and then asks us to stop (allocbench's proc.py) still gets the saved results.
void OnSignal(int signal_number, siginfo_t* info, void*) {
  const int saved_errno = errno;
  if (g_isolating && FromDescendant(info)) {
    g_from_descendant = signal_number;
  } else if (signal_number == SIGINT || signal_number == SIGTERM) {
    g_interrupted = 1;
    if (signal_number == SIGINT) std::signal(SIGINT, SIG_DFL);
  } else {  // as if we had never handled it: delivered again, by default, once we return
    std::signal(signal_number, SIG_DFL);
    raise(signal_number);
  }
  errno = saved_errno;
}

}  // namespace

void InstallInterruptHandlers(bool isolating) {
  g_isolating = isolating;
  struct sigaction action {};
  action.sa_sigaction = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_SIGINFO;  // no SA_RESTART: poll() and waits return EINTR
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  for (const int s : kOtherEndingSignals) {
    struct sigaction current {};
    // One ignored where we were started (SIGHUP under nohup) stays ignored.
    if (sigaction(s, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      sigaction(s, &action, nullptr);
    }
  }
}

void RestoreDefaultSignals() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  for (const int s : kOtherEndingSignals) {
    struct sigaction current {};
    if (sigaction(s, nullptr, &current) == 0 && current.sa_sigaction == OnSignal) {
      std::signal(s, SIG_DFL);
    }
  }
}

bool Interrupted() { return g_interrupted != 0; }

int TakeSignalFromDescendant() { return g_from_descendant.exchange(0); }

std::string SignalName(int signal_number) {
  const char* abbrev = sigabbrev_np(signal_number);
  const char* description = strsignal(signal_number);
  std::string name =
      abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal_number);
  return description ? name + " (" + description + ")" : name;
}

}  // namespace allocbench
