// SIGINT and SIGTERM for allocbench-run: the first one sets a flag and interrupts whatever the
// supervisor is blocked in (no SA_RESTART), so the run stops within a poll slice and saves what
// it measured; a second SIGINT ends the process at once.
#ifndef ALLOCBENCH_HARNESS_SIGNALS_H_
#define ALLOCBENCH_HARNESS_SIGNALS_H_

#include <string>

namespace allocbench {

void InstallInterruptHandlers();
bool Interrupted();

// "SIGSEGV (Segmentation fault)".
std::string SignalName(int signal_number);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_SIGNALS_H_
