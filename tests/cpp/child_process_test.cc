// The child processes that isolate instances: messages arrive, and every way a child can end is
// told apart, a hang included. Signals here are ones the sanitizers leave alone.
#include "child_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

namespace allocbench {
namespace {

TEST(ChildProcess, MessagesArriveInOrderAndANormalEndIsExitZero) {
  const ChildReport report = RunInChild(
      [](int fd) {
        SendToParent(fd, 'P', "count");
        SendToParent(fd, 'R', std::string(200000, 'x'));  // more than a pipe buffer holds
        SendToParent(fd, 'D', "");
      },
      10);
  EXPECT_EQ(report.end, ChildReport::End::kExited);
  EXPECT_EQ(report.status, 0);
  ASSERT_EQ(report.messages.size(), 3u);
  EXPECT_EQ(report.messages[0], std::make_pair('P', std::string("count")));
  EXPECT_EQ(report.Last('R').size(), 200000u);
  EXPECT_TRUE(report.Got('D'));
  EXPECT_FALSE(report.Got('E'));
}

TEST(ChildProcess, AnExitIsTold) {
  const ChildReport report = RunInChild([](int) { _exit(7); }, 10);
  EXPECT_EQ(report.end, ChildReport::End::kExited);
  EXPECT_EQ(report.status, 7);
}

TEST(ChildProcess, ASignalIsTold) {
  const ChildReport report = RunInChild([](int) { std::raise(SIGTERM); }, 10);
  EXPECT_EQ(report.end, ChildReport::End::kSignaled);
  EXPECT_EQ(report.status, SIGTERM);
}

TEST(ChildProcess, AHangIsKilledAtTheTimeLimit) {
  const ChildReport report = RunInChild(
      [](int fd) {
        SendToParent(fd, 'P', "time");
        for (;;) pause();
      },
      0.3);
  EXPECT_EQ(report.end, ChildReport::End::kTimedOut);
  EXPECT_EQ(report.Last('P'), "time");
}

// A grandchild that keeps the pipe open must not make the parent wait for it.
TEST(ChildProcess, AGrandchildHoldingThePipeDoesNotHoldTheParent) {
  const ChildReport report = RunInChild(
      [](int fd) {
        if (fork() == 0) {
          for (;;) pause();
        }
        SendToParent(fd, 'D', "");
      },
      30);
  EXPECT_EQ(report.end, ChildReport::End::kExited);
  EXPECT_TRUE(report.Got('D'));
}

}  // namespace
}  // namespace allocbench
