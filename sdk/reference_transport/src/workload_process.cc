// SPDX-License-Identifier: Apache-2.0
// One process's side of a multi-process workload, and the topologies the
// scenarios use.
#include <random>

#include "ncclnet/transport/workload.hpp"

namespace ncclnet::transport {

std::vector<LinkSpec> twoRankRing(int channels, bool p2p, bool useGdr) {
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
                              .tpRemoteRank = 1 - r,
                              .tpRemoteProxyRank = -1,
                              .useGdr = useGdr,
                              .needFlush = useGdr};
      l.recv = l.send;
      l.recv.tpRank = 1 - r;
      l.recv.tpRemoteRank = r;
      links.push_back(l);
    }
  }
  return links;
}

std::vector<LinkSpec> fanInLinks(int senders, int channels, bool useGdr) {
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
                              .tpRemoteRank = 0,
                              .tpRemoteProxyRank = -1,
                              .useGdr = useGdr};
      l.recv = ConnectionSpec{.netDev = 0,
                              .channelId = c,
                              .connIndex = 1,
                              .graph = false,
                              .tpRank = 0,
                              .tpLocalRank = 0,
                              .tpRemoteRank = 1 + s,
                              .tpRemoteProxyRank = 1,
                              .useGdr = useGdr,
                              .needFlush = useGdr};
      links.push_back(l);
    }
  }
  return links;
}

namespace {

// The connections of one process, closed in NCCL's order: the device side is
// done (rounds finished), then sends and receives.
struct ProcessConnections {
  std::vector<std::unique_ptr<Connection>> sends, recvs;
};

ncclResult_t setUp(Rank& rank, const Workload& w, int me, const ProcessHooks& hooks,
                   ProcessConnections* c, std::string* why) {
  size_t n = w.links.size();
  c->sends.resize(n);
  c->recvs.resize(n);
  std::vector<NetHandle> mine(n), all;
  for (size_t i = 0; i < n; i++) {
    if (w.links[i].recvProcess != me) continue;
    ncclResult_t res = rank.transport->recvSetup(w.links[i].recv, &mine[i], &c->recvs[i]);
    if (res != ncclSuccess) {
      *why = "recvSetup of link " + std::to_string(i) + " failed";
      return res;
    }
  }
  ncclResult_t res = hooks.exchange(mine, &all);
  if (res != ncclSuccess || all.size() != n) {
    *why = "handle exchange failed";
    return res != ncclSuccess ? res : ncclInternalError;
  }
  std::vector<std::pair<Connection*, const NetHandle*>> pendingSends;
  std::vector<Connection*> pendingRecvs;
  for (size_t i = 0; i < n; i++) {
    if (w.links[i].sendProcess == me) {
      res = rank.transport->sendSetup(w.links[i].send, &c->sends[i]);
      if (res != ncclSuccess) {
        *why = "sendSetup of link " + std::to_string(i) + " failed";
        return res;
      }
      pendingSends.push_back({c->sends[i].get(), &all[i]});
    }
    if (c->recvs[i]) pendingRecvs.push_back(c->recvs[i].get());
  }
  res = connectAll(pendingSends, pendingRecvs, hooks.timeout, why);
  if (res != ncclSuccess) *why = "connect: " + *why;
  return res;
}

}  // namespace

ncclResult_t runWorkloadProcess(Rank& rank, const Workload& w, int me, const ProcessHooks& hooks,
                                std::string* why) {
  ProcessConnections c;
  ncclResult_t res = setUp(rank, w, me, hooks, &c, why);
  if (res != ncclSuccess) return res;
  // A failed round may leave device works running on connection memory:
  // they are stopped before the connections close.
  struct StopDeviceOnFailure {
    Rank& rank;
    const ncclResult_t& res;
    ~StopDeviceOnFailure() {
      if (res != ncclSuccess) rank.device.reset();
    }
  } guard{rank, res};
  if (hooks.activity) hooks.activity("connected " + std::to_string(w.links.size()) + " links");

  std::mt19937_64 rng(w.seed);  // every process draws the same sizes
  int round = 0;
  for (const RoundOptions& phase : w.phases) {
    for (int r = 0; r < w.rounds; r++, round++) {
      std::vector<Transfer> transfers;
      for (size_t i = 0; i < w.links.size(); i++) {
        size_t nbytes = rng() % 8 == 0 ? 0 : rng() % (w.maxBytes + 1);
        if (!c.sends[i] && !c.recvs[i]) continue;
        Transfer t{.sendRank = c.sends[i] ? &rank : nullptr,
                   .send = c.sends[i].get(),
                   .recvRank = c.recvs[i] ? &rank : nullptr,
                   .recv = c.recvs[i].get(),
                   .nbytes = nbytes,
                   .seed = seedFor(round, static_cast<int>(i))};
        if (w.sendGroupByLocalRank) t.sendGroup = w.links[i].send.tpLocalRank;
        transfers.push_back(t);
      }
      res = runRound(transfers, phase, hooks.timeout, why);
      if (res != ncclSuccess) {
        *why = std::string(protocolName(phase.protocol)) + " round " + std::to_string(round) +
               ": " + *why;
        return res;
      }
      if (hooks.activity) {
        hooks.activity(std::string(protocolName(phase.protocol)) + " round " +
                       std::to_string(round) + " done");
      }
    }
  }
  // Every process finishes its rounds before anyone closes.
  res = hooks.barrier();
  if (res != ncclSuccess) *why = "final barrier failed";
  return res;
}

}  // namespace ncclnet::transport
