// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: one side of a test in a forked child process,
// joined to the test by a Channel. The child runs `body` and exits with its
// return value, never returning into the test framework. Every wait has a
// deadline; a child still running then is killed (SIGKILL, by its pid) and
// reaped, and so is any child left when the object goes: no zombies.
//
//   ncclnet::testing::ChildProcess child([](ncclnet::testing::Channel& parent) {
//     ... listen, parent.send(handle, sizeof(handle)), accept, receive ...
//     return 0;
//   });
//   ASSERT_TRUE(child.channel().receive(handle, sizeof(handle)));
//   ...
//   ExitStatus status = child.wait(30);
//   EXPECT_TRUE(status.succeeded()) << status.describe();
//
// Fork a child before the test process starts threads of its own (a plugin
// loaded in the parent starts some): only the forking thread survives fork.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "ncclnet/testing/channel.hpp"

namespace ncclnet::testing {

// How a child ended.
struct ExitStatus {
  enum class Kind { NotStarted, Exited, Signaled, TimedOut };
  Kind kind = Kind::NotStarted;
  int code = 0;    // Exited: the exit status
  int signal = 0;  // Signaled: the signal that ended it

  bool succeeded() const { return kind == Kind::Exited && code == 0; }
  bool exitedWith(int expected) const { return kind == Kind::Exited && code == expected; }
  // "exited with 0", "killed by signal 11",
  // "still running at its deadline: killed", "was never started".
  std::string describe() const;
};

// An ExitStatus from waitpid()'s status word.
ExitStatus fromWaitStatus(int status);

class ChildProcess {
 public:
  using Body = std::function<int(Channel& parent)>;
  // The exit status of a child whose body threw (the exception is printed).
  static constexpr int kUncaughtException = 125;

  explicit ChildProcess(const Body& body);
  ~ChildProcess();  // kills and reaps a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0 || ended_; }
  pid_t pid() const { return pid_; }
  // The test's end of the channel to the child.
  Channel& channel() { return channel_; }

  // Waits up to `seconds` for the child to end. At the deadline the child
  // is killed and reaped, and the status says TimedOut.
  ExitStatus wait(double seconds = 30);
  // SIGKILL now, then reaps it: when this returns, the kernel has closed
  // every socket the child had (what peer-death tests rely on).
  ExitStatus kill();

 private:
  ExitStatus reap(int options);
  pid_t pid_ = -1;
  bool ended_ = false;
  ExitStatus status_;
  Channel channel_;
};

}  // namespace ncclnet::testing
