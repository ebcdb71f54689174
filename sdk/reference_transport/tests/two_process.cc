// SPDX-License-Identifier: Apache-2.0
// Two-process scenarios over a real cross-process plugin.
#include "two_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

namespace ncclnet::transport::testing {

namespace {

using Clock = std::chrono::steady_clock;

bool writeAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool readAll(int fd, void* data, size_t n, std::chrono::milliseconds timeout) {
  char* p = static_cast<char*>(data);
  auto deadline = Clock::now() + timeout;
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    if (left <= 0 || ::poll(&pfd, 1, left) <= 0) return false;
    ssize_t r = ::read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// One process's side: set up its ends, swap handles, connect, run rounds.
std::string runSide(const TwoProcessScenario& sc, int me, int toPeer, int fromPeer) {
  std::unique_ptr<host::LoadedPlugin> plugin;
  std::string why;
  if (loadPlugin(sc.plugin, &plugin, &why) != ncclSuccess) return "load: " + why;
  Rank rank;
  if (makeRank(plugin->net(), sc.config, 0x2000 + me, &rank) != ncclSuccess)
    return "Transport::create";
  size_t n = sc.links.size();
  std::vector<std::unique_ptr<Connection>> sends(n), recvs(n);
  std::vector<NetHandle> mine(n), theirs(n);
  for (size_t i = 0; i < n; i++) {
    if (sc.links[i].recvProcess != me) continue;
    if (rank.transport->recvSetup(sc.links[i].recv, &mine[i], &recvs[i]) != ncclSuccess)
      return "recvSetup";
  }
  if (!writeAll(toPeer, mine.data(), n * sizeof(NetHandle))) return "handle write";
  if (!readAll(fromPeer, theirs.data(), n * sizeof(NetHandle), kTimeout)) return "handle read";
  std::vector<std::pair<Connection*, const NetHandle*>> pendingSends;
  std::vector<Connection*> pendingRecvs;
  for (size_t i = 0; i < n; i++) {
    if (sc.links[i].sendProcess == me) {
      if (rank.transport->sendSetup(sc.links[i].send, &sends[i]) != ncclSuccess) return "sendSetup";
      pendingSends.push_back({sends[i].get(), &theirs[i]});
    }
    if (recvs[i]) pendingRecvs.push_back(recvs[i].get());
  }
  if (connectAll(pendingSends, pendingRecvs, &why) != ncclSuccess) return "connect: " + why;

  std::mt19937_64 rng(sc.seed);  // both processes draw the same sizes
  int round = 0;
  for (const RoundOptions& phase : sc.phases) {
    for (int r = 0; r < sc.rounds; r++, round++) {
      std::vector<Transfer> transfers;
      for (size_t i = 0; i < n; i++) {
        size_t nbytes = rng() % 8 == 0 ? 0 : rng() % (sc.maxBytes + 1);
        if (!sends[i] && !recvs[i]) continue;
        Transfer t{.sendRank = sends[i] ? &rank : nullptr,
                   .send = sends[i].get(),
                   .recvRank = recvs[i] ? &rank : nullptr,
                   .recv = recvs[i].get(),
                   .nbytes = nbytes,
                   .seed = seedFor(round, int(i))};
        if (sc.sendGroupByLocalRank) t.sendGroup = sc.links[i].send.tpLocalRank;
        transfers.push_back(t);
      }
      if (runRound(transfers, phase, &why) != ncclSuccess) {
        return std::string(protocolName(phase.protocol)) + " round " + std::to_string(round) +
               ": " + why;
      }
    }
  }
  // Both sides finish their rounds before anyone closes.
  char token = 'x';
  if (!writeAll(toPeer, &token, 1) || !readAll(fromPeer, &token, 1, kTimeout))
    return "final barrier";
  rank.device.reset();
  sends.clear();
  recvs.clear();
  return "";
}

}  // namespace

std::string runTwoProcesses(const TwoProcessScenario& sc) {
  int down[2], up[2];  // down: parent -> child, up: child -> parent
  if (::pipe(down) != 0 || ::pipe(up) != 0) return "pipe";
  pid_t child = ::fork();
  if (child < 0) return "fork";
  if (child == 0) {
    ::close(down[1]);
    ::close(up[0]);
    std::string result = runSide(sc, 1, up[1], down[0]);
    if (!result.empty()) std::fprintf(stderr, "process 1: %s\n", result.c_str());
    std::fflush(stderr);
    ::_exit(result.empty() ? 0 : 1);
  }
  ::close(down[0]);
  ::close(up[1]);
  std::string result = runSide(sc, 0, down[1], up[0]);
  ::close(down[1]);
  ::close(up[0]);
  auto deadline = Clock::now() + kTimeout + std::chrono::seconds(10);
  int status = 0;
  for (;;) {
    pid_t w = ::waitpid(child, &status, WNOHANG);
    if (w == child) break;
    if (Clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      return result + (result.empty() ? "" : "; ") + "process 1 stuck, killed";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  bool childOk = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!result.empty()) result = "process 0: " + result;
  if (!childOk)
    result += (result.empty() ? "" : "; ") + std::string("process 1 failed (see stderr)");
  return result;
}

std::vector<LinkSpec> twoRankRing(int channels, bool p2p) {
  std::vector<LinkSpec> links;
  for (int c = 0; c < channels; c++) {
    for (int r = 0; r < 2; r++) {
      LinkSpec l;
      l.sendProcess = r;
      l.recvProcess = 1 - r;
      l.send = ConnectionSpec{.netDev = 0,
                              .channelId = c,
                              .connIndex = p2p ? 1 : 0,
                              .graph = !p2p,
                              .tpRank = r,
                              .tpLocalRank = 0,
                              .tpRemoteRank = 1 - r};
      l.recv = l.send;
      l.recv.tpRank = 1 - r;
      l.recv.tpRemoteRank = r;
      links.push_back(l);
    }
  }
  return links;
}

std::vector<LinkSpec> fanInLinks(int senders, int channels) {
  std::vector<LinkSpec> links;
  for (int c = 0; c < channels; c++) {
    for (int s = 0; s < senders; s++) {
      LinkSpec l;
      l.sendProcess = 1;
      l.recvProcess = 0;
      l.send = ConnectionSpec{.netDev = 0,
                              .channelId = c,
                              .connIndex = 1,
                              .graph = false,
                              .tpRank = 1 + s,
                              .tpLocalRank = s,
                              .tpRemoteRank = 0};
      l.recv = ConnectionSpec{.netDev = 0,
                              .channelId = c,
                              .connIndex = 1,
                              .graph = false,
                              .tpRank = 0,
                              .tpLocalRank = 0,
                              .tpRemoteRank = 1 + s,
                              .tpRemoteProxyRank = 1};
      links.push_back(l);
    }
  }
  return links;
}

}  // namespace ncclnet::transport::testing
