// A process's state and parent from /proc/<pid>/stat, read without allocating, so that a signal
// handler may call it (open, read and close are async-signal-safe).
#ifndef ALLOCBENCH_HARNESS_PROC_STAT_H_
#define ALLOCBENCH_HARNESS_PROC_STAT_H_

#include <sys/types.h>

namespace allocbench {

struct ProcStat {
  char state = '?';  // 'R', 'S', 'D', 'Z' (a zombie: ended, not reaped yet), ...
  pid_t parent = 0;
};

// False if there is no such process (or /proc cannot be read).
bool ReadProcStat(pid_t pid, ProcStat* out);

// True if `pid` is a child, grandchild, ... of the calling process.
bool IsDescendant(pid_t pid);

// Writes `value` in decimal at `out` (no terminating NUL); returns the end. For /proc paths
// built without allocating.
char* AppendDecimal(char* out, unsigned long value);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_PROC_STAT_H_
