// Signals for allocbench-run. The first SIGINT or SIGTERM sets a flag and interrupts whatever the
// supervisor is blocked in (no SA_RESTART), so the run stops within a poll slice and saves what
// it measured; a second SIGINT ends the process at once.
//
// When instances run in processes of their own, a signal that one of allocbench-run's own
// descendants sends it — a scenario's kill(getppid(), SIGTERM), an agent it started that signals
// its parent's parent — is not a stop request: it is the running instance's fault
// (TakeSignalFromDescendant()), and the run goes on. (Without isolation there is no process of
// the instance's to stop instead: such a signal stops the run, as any other.)
// The same holds for the other signals that would end the process (SIGHUP, SIGQUIT, SIGUSR1,
// SIGUSR2, SIGALRM); from anyone else, those end it as they always did. The sender is told by
// the siginfo's si_pid, whose parents the handler follows in /proc. Not covered: SIGKILL and
// SIGSTOP, which no process can catch.
#ifndef ALLOCBENCH_HARNESS_SIGNALS_H_
#define ALLOCBENCH_HARNESS_SIGNALS_H_

#include <string>

namespace allocbench {

void InstallInterruptHandlers(bool isolating);
// In a child process: every signal as InstallInterruptHandlers() found it (the scenario's own).
void RestoreDefaultSignals();
bool Interrupted();

// The last signal a descendant of this process sent it since the previous call, or 0; clears it.
int TakeSignalFromDescendant();

// "SIGSEGV (Segmentation fault)".
std::string SignalName(int signal_number);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_SIGNALS_H_
