// SPDX-License-Identifier: Apache-2.0
// Starting one rank of one scenario in a fresh process: the coordinator does
// it for the ranks on its node, an agent for the ranks on its node.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

namespace conformance {

// What a worker process needs to know to run its rank.
struct WorkerSpec {
  uint64_t runId = 0;
  std::string scenario;  // "Data.Sizes"
  int version = 0;       // ABI version to load
  int rank = 0;
  int ranks = 0;
  std::string controlHost;
  int controlPort = 0;
};

// Runs in the child; its return value is the exit code.
using WorkerEntry = std::function<int(const WorkerSpec&)>;

// A worker that skipped exits with this code (fabtests' convention: a
// reserved code, so that a skip is never mistaken for a pass).
constexpr int kExitSkip = 77;

// Forks a worker. The child never returns into the caller: it closes the
// descriptors registered with closeInChildren(), dies with its parent, runs
// `entry` and _exit()s. Returns the pid or -1.
pid_t forkWorker(const WorkerSpec& spec, const WorkerEntry& entry);
void closeInChildren(int fd);

// "exited with status 3", "killed by SIGSEGV".
std::string describeWaitStatus(int status);

}  // namespace conformance
