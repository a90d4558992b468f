// Running a piece of allocbench-run in a child process that may crash, hang, throw or exit
// without taking the run with it.
//
// The child is forked (not exec'd: it inherits the loaded plugins and Google Benchmark's set-up),
// gets its own process group so that a time-out kills everything it started, and dies with the
// parent (PR_SET_PDEATHSIG). It talks to the parent in lines on a pipe (report_channel.h). The
// parent never blocks for longer than a poll slice, so a time-out or a SIGINT is acted on at
// once. Once the child has ended, nothing it started is left running: the parent is the
// subreaper of its descendants (descendants.h), and kills and reaps every one, counting those
// the child left behind when it ended on its own.
#ifndef ALLOCBENCH_HARNESS_CHILD_PROCESS_H_
#define ALLOCBENCH_HARNESS_CHILD_PROCESS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "report_channel.h"

namespace allocbench {

struct ChildReport {
  enum class End {
    kExited,             // exit status in `status` (the body's normal end is 0)
    kSignaled,           // the signal in `status`
    kTimedOut,           // killed by us after the time limit
    kInterrupted,        // killed by us because allocbench-run got SIGINT or SIGTERM
    kSignaledSupervisor  // killed by us because it (or a process it started) sent us the
                         // signal in `status` (see signals.h)
  };
  End end = End::kExited;
  int status = 0;
  std::vector<std::pair<char, std::string>> messages;  // in the order sent
  // Processes the child started that were still running when it ended (kExited, kSignaled);
  // they were killed.
  int left_running = 0;
  // Why the child could not open its end of the pipe again after the body closed it (an errno),
  // or 0: then every message it sent arrived.
  int channel_lost_errno = 0;

  // The text of the last message of `kind`, or "" if none came.
  std::string Last(char kind) const;
  bool Got(char kind) const;
};

// The message the child sends when an exception escapes `body`: the harness's own failure (a
// thread it could not start, memory it could not get), with what() as its text. The child then
// exits with status 3; the caller should report it as an internal error, not the scenario's.
constexpr char kHarnessFailed = 'H';

// Runs `body()` in a child, which sends its messages with SendToParent(); the child exits with
// status 0 when the body returns. Waits at most `timeout_s` seconds (<= 0: no limit).
// REQUIRES: the calling process has no other threads (fork copies only the caller). Children
// it has already are left alone.
ChildReport RunInChild(const std::function<void()>& body, double timeout_s);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_CHILD_PROCESS_H_
