// SPDX-License-Identifier: Apache-2.0
// Forking rank workers.
#include "harness/launch.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace conformance {

namespace {
std::vector<int>& inheritedFds() {
  static std::vector<int> fds;
  return fds;
}
}  // namespace

void closeInChildren(int fd) {
  inheritedFds().push_back(fd);
}

pid_t forkWorker(const WorkerSpec& spec, const WorkerEntry& entry) {
  // Unflushed output would otherwise be written twice, once per process.
  std::fflush(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0) return pid;
  // A worker must not outlive the process that watches its deadline.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  for (int fd : inheritedFds()) close(fd);
  int code = 1;
  try {
    code = entry(spec);
  } catch (...) {
    code = 1;
  }
  std::fflush(nullptr);
  // _exit: the parent's atexit handlers (test reports) are not ours to run.
  _exit(code);
}

std::string describeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return std::string("was killed by SIG") +
           (name ? name : std::to_string(WTERMSIG(status)).c_str());
  }
  return "ended with wait status " + std::to_string(status);
}

}  // namespace conformance
