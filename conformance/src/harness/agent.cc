// SPDX-License-Identifier: Apache-2.0
// Agent loop for the ranks of another node.
#include "harness/agent.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <utility>

#include "harness/wire.hpp"

namespace conformance {

namespace {

struct Child {
  uint64_t runId;
  int rank;
};

void killRun(std::map<pid_t, Child>& children, uint64_t runId) {
  for (auto& [pid, child] : children) {
    if (runId == 0 || child.runId == runId) kill(pid, SIGKILL);
  }
}

}  // namespace

int runAgent(const std::string& host, int port, int worldRank, double joinTimeoutSec,
             const WorkerEntry& entry) {
  std::string error;
  int fd = connectTcp(host, port, joinTimeoutSec, &error);
  if (fd < 0) {
    std::fprintf(stderr, "ncclnet-conformance: rank %d: %s\n", worldRank, error.c_str());
    return 2;
  }
  closeInChildren(fd);
  Channel channel(fd);
  channel.send(Msg::AgentHello, Writer().u32(static_cast<uint32_t>(worldRank)).data());
  std::map<pid_t, Child> children;
  for (;;) {
    pollfd p{channel.fd(), POLLIN, 0};
    poll(&p, 1, 20);
    bool alive = channel.readAvailable();
    Frame frame;
    while (channel.next(&frame)) {
      Reader reader(frame.body);
      if (frame.type == Msg::Quit) alive = false;
      if (frame.type == Msg::Stop) killRun(children, reader.u64());
      if (frame.type != Msg::Start) continue;
      WorkerSpec spec;
      spec.runId = reader.u64();
      spec.scenario = reader.str();
      spec.version = static_cast<int>(reader.u32());
      spec.rank = static_cast<int>(reader.u32());
      spec.ranks = static_cast<int>(reader.u32());
      spec.controlHost = reader.str();
      spec.controlPort = static_cast<int>(reader.u32());
      if (!reader.ok()) continue;
      pid_t pid = forkWorker(spec, entry);
      if (pid > 0) {
        children[pid] = Child{spec.runId, spec.rank};
      } else {
        channel.send(
            Msg::Exited,
            Writer().u64(spec.runId).u32(static_cast<uint32_t>(spec.rank)).u32(1u << 8).data());
      }
    }
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      auto it = children.find(pid);
      if (it == children.end()) continue;
      channel.send(Msg::Exited, Writer()
                                    .u64(it->second.runId)
                                    .u32(static_cast<uint32_t>(it->second.rank))
                                    .u32(static_cast<uint32_t>(status))
                                    .data());
      children.erase(it);
    }
    if (!alive) break;
  }
  killRun(children, 0);
  for (auto& entryPair : children) waitpid(entryPair.first, nullptr, 0);
  return 0;
}

}  // namespace conformance
