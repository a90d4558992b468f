// The child processes that isolate instances: messages arrive, every way a child can end is
// told apart, a hang included, and nothing the child started is left once RunInChild returns.
// Signals here are ones the sanitizers leave alone.
#include "child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

#include "signals.h"

namespace allocbench {
namespace {

// A process of the body's tells the supervisor its pid ('G'), then waits for ever; the body
// waits until it has told (else the body could end, and the process be killed, before).
class Waiter {
 public:
  Waiter() {
    if (pipe(told_) != 0) std::abort();
  }
  [[noreturn]] void TellAndWait() {
    SendToParent('G', std::to_string(getpid()));
    if (write(told_[1], "x", 1) != 1) std::abort();
    for (;;) pause();
  }
  void UntilTold() {
    char c;
    while (read(told_[0], &c, 1) < 0 && errno == EINTR) {
    }
  }

 private:
  int told_[2];
};

pid_t GrandchildPid(const ChildReport& report) {
  return static_cast<pid_t>(std::stol(report.Last('G')));
}

// Gone: no process has that pid, and the calling process has no child left, not even a zombie
// (as the subreaper, every orphan of the body's would be one). One still there is killed after
// the failure is told, so that it cannot hold the test's output open (and ctest) for ever.
void ExpectGone(pid_t pid) {
  const bool alive = kill(pid, 0) == 0;
  EXPECT_FALSE(alive) << "process " << pid << " outlived RunInChild";
  if (alive)
    kill(pid, SIGKILL);
  else
    EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

void CloseEveryDescriptorAbove2() {
  for (int fd = 3; fd < 4096; ++fd) close(fd);
}

TEST(ChildProcess, MessagesArriveInOrderAndANormalEndIsExitZero) {
  const ChildReport report = RunInChild(
      [] {
        SendToParent('P', "count");
        SendToParent('R', std::string(200000, 'x'));  // more than a pipe buffer holds
        SendToParent('D', "");
      },
      10);
  EXPECT_EQ(report.end, ChildReport::End::kExited);
  EXPECT_EQ(report.status, 0);
  ASSERT_EQ(report.messages.size(), 3u);
  EXPECT_EQ(report.messages[0], std::make_pair('P', std::string("count")));
  EXPECT_EQ(report.Last('R').size(), 200000u);
  EXPECT_TRUE(report.Got('D'));
  EXPECT_FALSE(report.Got('E'));
  EXPECT_EQ(report.left_running, 0);
  EXPECT_EQ(report.channel_lost_errno, 0);
}

TEST(ChildProcess, AnExitIsTold) {
  const ChildReport report = RunInChild([] { _exit(7); }, 10);
  EXPECT_EQ(report.end, ChildReport::End::kExited);
  EXPECT_EQ(report.status, 7);
}

TEST(ChildProcess, ASignalIsTold) {
  const ChildReport report = RunInChild([] { std::raise(SIGTERM); }, 10);
  EXPECT_EQ(report.end, ChildReport::End::kSignaled);
  EXPECT_EQ(report.status, SIGTERM);
}

TEST(ChildProcess, AHangIsKilledAtTheTimeLimit) {
  const ChildReport report = RunInChild(
      [] {
        SendToParent('P', "time");
        for (;;) pause();
      },
      0.3);
  EXPECT_EQ(report.end, ChildReport::End::kTimedOut);
  EXPECT_EQ(report.Last('P'), "time");
}

// A grandchild that keeps the pipe open neither holds the parent nor outlives the child.
TEST(ChildProcess, AGrandchildHoldingThePipeDoesNotHoldTheParentNorOutliveTheChild) {
  const ChildReport report = RunInChild(
      [] {
        Waiter waiter;
        if (fork() == 0) waiter.TellAndWait();
        waiter.UntilTold();
        SendToParent('D', "");
      },
      30);
  EXPECT_EQ(report.end, ChildReport::End::kExited);
  EXPECT_TRUE(report.Got('D'));
  EXPECT_EQ(report.left_running, 1);
  ExpectGone(GrandchildPid(report));
}

// An agent started the way daemons start: fork, setsid() (out of the child's session and
// process group, beyond a kill of the group), fork again, and the middle process exits.
TEST(ChildProcess, ADaemonInASessionOfItsOwnIsKilledAndCounted) {
  const ChildReport report = RunInChild(
      [] {
        Waiter waiter;
        const pid_t middle = fork();
        if (middle == 0) {
          setsid();
          if (fork() == 0) waiter.TellAndWait();
          _exit(0);
        }
        waitpid(middle, nullptr, 0);
        waiter.UntilTold();
        SendToParent('D', "");
      },
      30);
  EXPECT_EQ(report.end, ChildReport::End::kExited);
  EXPECT_EQ(report.left_running, 1);
  ExpectGone(GrandchildPid(report));
}

TEST(ChildProcess, TheDaemonOfAChildThatTimedOutIsKilledToo) {
  const ChildReport report = RunInChild(
      [] {
        Waiter waiter;
        if (fork() == 0) {
          setsid();
          waiter.TellAndWait();
        }
        waiter.UntilTold();
        for (;;) pause();
      },
      1);
  EXPECT_EQ(report.end, ChildReport::End::kTimedOut);
  EXPECT_EQ(report.left_running, 0);  // not left behind: killed with the child
  ExpectGone(GrandchildPid(report));
}

// A process that ended and that the child never reaped is no process left running.
TEST(ChildProcess, AZombieTheChildLeftIsReapedAndNotCounted) {
  const ChildReport report = RunInChild(
      [] {
        const pid_t quick = fork();
        if (quick == 0) _exit(0);
        siginfo_t info{};
        waitid(P_PID, static_cast<id_t>(quick), &info, WEXITED | WNOWAIT);  // a zombie now
        SendToParent('G', std::to_string(quick));
        SendToParent('D', "");
      },
      30);
  EXPECT_EQ(report.end, ChildReport::End::kExited);
  EXPECT_EQ(report.left_running, 0);
  ExpectGone(GrandchildPid(report));
}

// A daemonizing agent closes every descriptor, and the next files it opens get their numbers.
TEST(ChildProcess, APipeTheBodyClosedIsOpenedAgainAndNothingGoesIntoItsFiles) {
  char path[] = "/tmp/allocbench-child-process-test.XXXXXX";
  const int made = mkstemp(path);
  ASSERT_GE(made, 0);
  close(made);
  const ChildReport report = RunInChild(
      [&] {
        SendToParent('P', "count");
        CloseEveryDescriptorAbove2();
        for (int i = 0; i < 8; ++i) open(path, O_WRONLY | O_APPEND);  // the pipe's number too
        SendToParent('R', "measured");
        SendToParent('D', "");
      },
      30);
  std::ifstream written(path);
  const std::string content((std::istreambuf_iterator<char>(written)),
                            std::istreambuf_iterator<char>());
  unlink(path);
  EXPECT_EQ(report.end, ChildReport::End::kExited);
  EXPECT_EQ(report.status, 0);
  ASSERT_EQ(report.messages.size(), 3u);
  EXPECT_EQ(report.Last('R'), "measured");
  EXPECT_TRUE(report.Got('D'));
  EXPECT_EQ(report.channel_lost_errno, 0);
  EXPECT_EQ(content, "");
}

TEST(ChildProcess, APipeThatCannotBeOpenedAgainIsToldWithTheReason) {
  const ChildReport report = RunInChild(
      [] {
        SendToParent('P', "count");
        CloseEveryDescriptorAbove2();
        const rlimit none{0, 0};
        setrlimit(RLIMIT_NOFILE, &none);  // and no descriptor may be opened
        SendToParent('R', "measured");
        SendToParent('D', "");
      },
      30);
  EXPECT_EQ(report.end, ChildReport::End::kExited);
  EXPECT_EQ(report.status, 0);
  ASSERT_EQ(report.messages.size(), 1u);
  EXPECT_EQ(report.Last('P'), "count");
  EXPECT_EQ(report.channel_lost_errno, EMFILE);
}

// A scenario that signals allocbench-run, itself or through a process it started in a session
// of its own, commits a fault of its own: the run is not interrupted.
TEST(ChildProcess, ASignalFromTheChildOrItsDaemonIsItsFaultNotAnInterrupt) {
  InstallInterruptHandlers(true);
  const ChildReport direct = RunInChild(
      [] {
        kill(getppid(), SIGTERM);
        for (;;) pause();
      },
      30);
  EXPECT_EQ(direct.end, ChildReport::End::kSignaledSupervisor);
  EXPECT_EQ(direct.status, SIGTERM);
  const pid_t supervisor = getpid();
  const ChildReport daemon = RunInChild(
      [supervisor] {
        if (fork() == 0) {
          setsid();
          if (fork() == 0) {
            kill(supervisor, SIGUSR1);
            for (;;) pause();
          }
          _exit(0);
        }
        for (;;) pause();
      },
      30);
  EXPECT_EQ(daemon.end, ChildReport::End::kSignaledSupervisor);
  EXPECT_EQ(daemon.status, SIGUSR1);
  EXPECT_FALSE(Interrupted());
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  // And the next child is not blamed for them.
  const ChildReport next = RunInChild([] { SendToParent('D', ""); }, 30);
  EXPECT_EQ(next.end, ChildReport::End::kExited);
  EXPECT_TRUE(next.Got('D'));
}

}  // namespace
}  // namespace allocbench
