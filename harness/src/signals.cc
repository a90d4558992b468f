#include "signals.h"

#include <string.h>

#include <csignal>

namespace allocbench {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

// A second Ctrl-C ends the process at once; SIGTERM stays handled, so that a parent that
// interrupts us and then asks us to stop (allocbench's proc.py) still gets the saved results.
void OnInterrupt(int signal_number) {
  g_interrupted = 1;
  if (signal_number == SIGINT) std::signal(SIGINT, SIG_DFL);
}

}  // namespace

void InstallInterruptHandlers() {
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: poll() and waits return EINTR
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool Interrupted() { return g_interrupted != 0; }

std::string SignalName(int signal_number) {
  const char* abbrev = sigabbrev_np(signal_number);
  const char* description = strsignal(signal_number);
  std::string name =
      abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal_number);
  return description ? name + " (" + description + ")" : name;
}

}  // namespace allocbench
