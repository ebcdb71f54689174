// SPDX-License-Identifier: Apache-2.0
// Scenario fixture for in-process runs.
#include "scenario.hpp"

#include "built_file.hpp"

namespace ncclnet::transport::testing {

std::string testnetPath() {
  return ncclnet::testing::builtFile(NCCLNET_RT_TESTNET, NCCLNET_RT_TESTNET_REL);
}
std::string loopnetPath(const std::string& variant) {
  std::string name = "libnccl-net-loopnet" + (variant.empty() ? "" : "-" + variant) + ".so";
  return ncclnet::testing::builtFile(std::string(NCCLNET_RT_PLUGIN_DIR) + "/" + name, name);
}

Scenario::~Scenario() {
  for (Rank& r : ranks_) r.device.reset();
  links_.clear();
  ranks_.clear();
}

ncclResult_t Scenario::start(const std::string& path, int nranks, const TransportConfig& config,
                             std::string* why) {
  ncclResult_t res = loadPlugin(path, &plugin_, why);
  if (res != ncclSuccess) return res;
  net_ = std::make_unique<RecordingNet>(plugin_->net());
  ranks_.resize(nranks);
  for (int r = 0; r < nranks; r++) {
    if (maker_) {
      res = maker_(*net_, config, 0x1000 + r, &ranks_[r], why);
      if (res != ncclSuccess) return res;
      continue;
    }
    res = makeHostRank(*net_, config, 0x1000 + r, &ranks_[r]);
    if (res != ncclSuccess) return *why = "Transport::create failed", res;
  }
  return ncclSuccess;
}

ncclResult_t Scenario::ring(int channels, bool p2p, bool useGdr, std::string* why) {
  int n = static_cast<int>(ranks_.size());
  for (int c = 0; c < channels; c++) {
    for (int r = 0; r < n; r++) {
      int next = (r + 1) % n;
      ConnectionSpec send{.netDev = 0,
                          .channelId = c,
                          .connIndex = p2p ? 1 : 0,
                          .graph = !p2p,
                          .tpRank = r,
                          .tpLocalRank = 0,
                          .tpRemoteRank = next,
                          .tpRemoteProxyRank = -1,
                          .useGdr = useGdr,
                          .needFlush = useGdr};
      ConnectionSpec recv = send;
      recv.tpRank = next;
      recv.tpRemoteRank = r;
      auto link = std::make_unique<Link>();
      ncclResult_t res = makeLink(ranks_[r], ranks_[next], send, recv, link.get(), why);
      if (res != ncclSuccess) return res;
      links_.push_back(std::move(link));
    }
  }
  return ncclSuccess;
}

// Rank 0 receives; ranks 1..senders are local ranks 0..senders-1 of the
// sending node, all proxied by rank 1's transport (PXN): their sends to
// rank 0 share one sendComm per channel, and rank 0's receives from them
// share one recvComm per channel (same remote proxy rank).
ncclResult_t Scenario::fanIn(int senders, int channels, std::string* why) {
  fanInTopology_ = true;
  Rank& proxy = ranks_[1];
  Rank& receiver = ranks_[0];
  for (int c = 0; c < channels; c++) {
    std::vector<std::unique_ptr<Link>> made;
    std::vector<NetHandle> handles(senders);
    for (int s = 0; s < senders; s++) {
      int sender = 1 + s;
      ConnectionSpec recv{.netDev = 0,
                          .channelId = c,
                          .connIndex = 1,
                          .graph = false,
                          .tpRank = 0,
                          .tpLocalRank = 0,
                          .tpRemoteRank = sender,
                          .tpRemoteProxyRank = 1};
      ConnectionSpec send{.netDev = 0,
                          .channelId = c,
                          .connIndex = 1,
                          .graph = false,
                          .tpRank = sender,
                          .tpLocalRank = s,
                          .tpRemoteRank = 0};
      auto link = std::make_unique<Link>();
      ncclResult_t res = receiver.transport->recvSetup(recv, &handles[s], &link->recv);
      if (res != ncclSuccess) return *why = "recvSetup failed", res;
      res = proxy.transport->sendSetup(send, &link->send);
      if (res != ncclSuccess) return *why = "sendSetup failed", res;
      link->sender = 1;  // the transport that drives it
      link->receiver = 0;
      link->channel = c;
      made.push_back(std::move(link));
    }
    std::vector<std::pair<Connection*, const NetHandle*>> sends;
    std::vector<Connection*> recvs;
    for (int s = 0; s < senders; s++) {
      sends.push_back({made[s]->send.get(), &handles[s]});
      recvs.push_back(made[s]->recv.get());
    }
    ncclResult_t res = connectAll(sends, recvs, kTimeout, why);
    if (res != ncclSuccess) return res;
    for (auto& l : made) links_.push_back(std::move(l));
  }
  return ncclSuccess;
}

ncclResult_t Scenario::randomRounds(int rounds, size_t maxBytes, const RoundOptions& options,
                                    uint32_t seed, std::string* why) {
  std::mt19937_64 rng(seed);
  for (int round = 0; round < rounds; round++) {
    std::vector<Transfer> transfers;
    for (size_t i = 0; i < links_.size(); i++) {
      Link& l = *links_[i];
      size_t nbytes = rng() % 8 == 0 ? 0 : rng() % (maxBytes + 1);
      Transfer t = transferOn(senderOf(l), receiverOf(l), l, nbytes, seedFor(round, int(i)));
      // Fan-in: each sending local rank posts its own operation, as NCCL
      // does for the ranks a PXN proxy serves.
      if (fanInTopology_) t.sendGroup = l.send->spec().tpLocalRank;
      transfers.push_back(t);
    }
    ncclResult_t res = runRound(transfers, options, kTimeout, why);
    if (res != ncclSuccess) {
      *why = "round " + std::to_string(round) + ": " + *why;
      return res;
    }
  }
  return ncclSuccess;
}

}  // namespace ncclnet::transport::testing
