// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: forked children with deadlines.
#include "ncclnet/testing/child_process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include "ncclnet/testing/deadline.hpp"

namespace ncclnet::testing {

std::string ExitStatus::describe() const {
  switch (kind) {
    case Kind::NotStarted: return "was never started";
    case Kind::Exited: return "exited with " + std::to_string(code);
    case Kind::Signaled: return "killed by signal " + std::to_string(signal);
    case Kind::TimedOut: return "still running at its deadline: killed";
  }
  return "?";
}

ExitStatus fromWaitStatus(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) {
    s.kind = ExitStatus::Kind::Exited;
    s.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    s.kind = ExitStatus::Kind::Signaled;
    s.signal = WTERMSIG(status);
  }
  return s;
}

ChildProcess::ChildProcess(const Body& body) {
  Channel childEnd;
  if (!Channel::makePair(&channel_, &childEnd)) return;
  // What stdio holds would otherwise be written twice, once by each process.
  std::fflush(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    channel_.close();
    int code = kUncaughtException;
    try {
      code = body(childEnd);
    } catch (const std::exception& e) {  // unwinding further would run the framework
      std::fprintf(stderr, "child %d: uncaught exception: %s\n", static_cast<int>(::getpid()),
                   e.what());
    } catch (...) {
      std::fprintf(stderr, "child %d: uncaught exception\n", static_cast<int>(::getpid()));
    }
    std::fflush(nullptr);
    ::_exit(code);  // never back into the test framework, nor its atexit handlers
  }
  if (pid_ < 0) channel_.close();
}

ChildProcess::~ChildProcess() {
  kill();
}

ExitStatus ChildProcess::reap(int options) {
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid_, &status, options);
  } while (got < 0 && errno == EINTR);
  if (got != pid_) return status_;  // still running (WNOHANG)
  pid_ = -1;
  ended_ = true;
  status_ = fromWaitStatus(status);
  return status_;
}

ExitStatus ChildProcess::wait(double seconds) {
  if (pid_ <= 0) return status_;
  Deadline deadline(seconds);
  while (pid_ > 0) {
    reap(WNOHANG);
    if (pid_ <= 0) break;
    if (deadline.expired()) {
      kill();
      status_ = ExitStatus{ExitStatus::Kind::TimedOut};
      return status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status_;
}

ExitStatus ChildProcess::kill() {
  if (pid_ <= 0) return status_;
  ::kill(pid_, SIGKILL);
  return reap(0);
}

}  // namespace ncclnet::testing
