// The processes an instance leaves behind. The supervisor makes itself their subreaper
// (PR_SET_CHILD_SUBREAPER): a process an instance starts that outlives its parent — a daemon
// that called setsid() to leave the instance's session and process group included — becomes the
// supervisor's child instead of init's, so that once the instance has ended it can be counted,
// killed and reaped. Not covered: a SIGKILL of the supervisor itself leaves such a daemon to init
// (the instance's own processes die with it, PR_SET_PDEATHSIG).
#ifndef ALLOCBENCH_HARNESS_DESCENDANTS_H_
#define ALLOCBENCH_HARNESS_DESCENDANTS_H_

#include <sys/types.h>

#include <vector>

namespace allocbench {

// Makes the calling process the subreaper of its descendants (again and again: harmless).
void BecomeSubreaper();

// The children of the calling process (of every thread of it), from /proc/<pid>/task/*/children.
std::vector<pid_t> Children();

// How many descendants of the calling process are running (zombies are not), not counting the
// processes in `except` and what descends from them.
int RunningDescendants(const std::vector<pid_t>& except);

// SIGKILLs and reaps every child of the calling process but those in `except`, and every process
// that this makes its child, until none is left.
void KillAndReapChildren(const std::vector<pid_t>& except);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_DESCENDANTS_H_
