// SPDX-License-Identifier: Apache-2.0
// Test kit: a forked child's end is always reported, and never left behind.
#include "ncclnet/testing/child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "ncclnet/testing/deadline.hpp"

namespace ncclnet::testing {
namespace {

// True when `pid` no longer exists, not even as a zombie of this process.
bool gone(pid_t pid) {
  return ::waitpid(pid, nullptr, WNOHANG) < 0 && errno == ECHILD;
}

TEST(ChildProcess, ExitStatusIsReported) {
  ChildProcess child([](Channel&) { return 3; });
  ASSERT_TRUE(child.started());
  ExitStatus status = child.wait(10);
  EXPECT_TRUE(status.exitedWith(3)) << status.describe();
  EXPECT_FALSE(status.succeeded());
  EXPECT_EQ(status.describe(), "exited with 3");
}

TEST(ChildProcess, HungChildIsKilledAtItsDeadlineAndReaped) {
  ChildProcess child([](Channel&) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    return 0;
  });
  pid_t pid = child.pid();
  ASSERT_GT(pid, 0);
  auto start = Clock::now();
  ExitStatus status = child.wait(0.3);
  double took = secondsSince(start);
  EXPECT_EQ(status.kind, ExitStatus::Kind::TimedOut) << status.describe();
  EXPECT_EQ(status.describe(), "still running at its deadline: killed");
  EXPECT_GE(took, 0.3);
  EXPECT_LT(took, 5.0);
  EXPECT_TRUE(gone(pid)) << "the killed child was not reaped";
}

TEST(ChildProcess, CrashIsReportedWithItsSignal) {
  ChildProcess child([](Channel&) {
    ::raise(SIGSEGV);
    return 0;
  });
  ExitStatus status = child.wait(10);
  EXPECT_EQ(status.kind, ExitStatus::Kind::Signaled) << status.describe();
  EXPECT_EQ(status.signal, SIGSEGV);
  EXPECT_NE(status.describe().find("killed by signal 11"), std::string::npos) << status.describe();
}

TEST(ChildProcess, AnExceptionNeverUnwindsIntoTheFramework) {
  ChildProcess child([](Channel&) -> int { throw std::runtime_error("boom"); });
  ExitStatus status = child.wait(10);
  EXPECT_TRUE(status.exitedWith(ChildProcess::kUncaughtException)) << status.describe();
}

TEST(ChildProcess, DestructorKillsAndReapsARunningChild) {
  pid_t pid = -1;
  {
    ChildProcess child([](Channel&) {
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      return 0;
    });
    pid = child.pid();
    ASSERT_GT(pid, 0);
  }
  EXPECT_TRUE(gone(pid));
}

TEST(ChildProcess, KillEndsTheChildAndClosesItsChannel) {
  ChildProcess child([](Channel& parent) {
    parent.signal();
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    return 0;
  });
  ASSERT_TRUE(child.channel().waitSignal(10));
  ExitStatus status = child.kill();
  EXPECT_EQ(status.kind, ExitStatus::Kind::Signaled);
  EXPECT_EQ(status.signal, SIGKILL);
  char byte = 0;
  auto start = Clock::now();
  EXPECT_FALSE(child.channel().receive(&byte, 1, 10)) << "the dead child's end is still open";
  EXPECT_LT(secondsSince(start), 5.0);
}

TEST(ChildProcess, ChannelCarriesBytesBothWays) {
  ChildProcess child([](Channel& parent) {
    int value = 0;
    if (!parent.receiveValue(&value, 10)) return 1;
    return parent.sendValue(value * 2) ? 0 : 2;
  });
  ASSERT_TRUE(child.channel().sendValue(21));
  int doubled = 0;
  ASSERT_TRUE(child.channel().receiveValue(&doubled, 10));
  EXPECT_EQ(doubled, 42);
  EXPECT_TRUE(child.wait(10).succeeded());
}

}  // namespace
}  // namespace ncclnet::testing
