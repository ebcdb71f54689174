// SPDX-License-Identifier: Apache-2.0
// Test harness for the reference transport.
#include "harness.hpp"

#include <map>
#include <thread>

#include "ncclnet/transport/pattern.hpp"

namespace ncclnet::transport::testing {

using Clock = std::chrono::steady_clock;

ncclResult_t loadPlugin(const std::string& path, std::unique_ptr<host::LoadedPlugin>* out,
                        std::string* why) {
  host::LoaderOptions options;
  options.pluginList = path;
  options.netName = std::string();
  host::Loader loader(options);
  ncclResult_t res = loader.load(out);
  if (res != ncclSuccess && why) *why = loader.report().outcome;
  return res;
}

ncclResult_t makeRank(host::NetView& net, const TransportConfig& config, uint64_t commId,
                      Rank* out) {
  TransportOptions options;
  options.config = config;
  options.commId = commId;
  ncclResult_t res = Transport::create(net, options, &out->transport);
  if (res != ncclSuccess) return res;
  out->device = std::make_unique<HostDevicePeer>();
  return ncclSuccess;
}

ncclResult_t connectAll(const std::vector<std::pair<Connection*, const NetHandle*>>& sends,
                        const std::vector<Connection*>& recvs, std::string* why) {
  auto deadline = Clock::now() + kTimeout;
  for (;;) {
    bool pending = false;
    for (auto& s : sends) {
      ncclResult_t res = s.first->connect(*s.second);
      if (res == ncclInProgress)
        pending = true;
      else if (res != ncclSuccess)
        return *why = "connect failed", res;
    }
    for (Connection* r : recvs) {
      ncclResult_t res = r->accept();
      if (res == ncclInProgress)
        pending = true;
      else if (res != ncclSuccess)
        return *why = "accept failed", res;
    }
    if (!pending) return ncclSuccess;
    if (Clock::now() > deadline) return *why = "connect/accept did not finish", ncclTimeout;
    std::this_thread::yield();
  }
}

ncclResult_t makeLink(Rank& from, Rank& to, ConnectionSpec sendSpec, ConnectionSpec recvSpec,
                      Link* out, std::string* why) {
  NetHandle handle;
  ncclResult_t res = to.transport->recvSetup(recvSpec, &handle, &out->recv);
  if (res != ncclSuccess) return *why = "recvSetup failed", res;
  res = from.transport->sendSetup(sendSpec, &out->send);
  if (res != ncclSuccess) return *why = "sendSetup failed", res;
  out->sender = sendSpec.tpRank;
  out->receiver = recvSpec.tpRank;
  out->channel = sendSpec.channelId;
  return connectAll({{out->send.get(), &handle}}, {out->recv.get()}, why);
}

uint64_t seedFor(int round, int link) {
  return patternWord(0x5eed, static_cast<uint64_t>(round) * 1000003u + link);
}

Transfer transferOn(Rank& from, Rank& to, Link& link, size_t nbytes, uint64_t seed) {
  return Transfer{.sendRank = &from,
                  .send = link.send.get(),
                  .recvRank = &to,
                  .recv = link.recv.get(),
                  .nbytes = nbytes,
                  .seed = seed};
}

namespace {

struct PerRank {
  std::vector<DeviceWork> works;
  std::map<int, ProxyOpSpec> sendOps;  // by send group
  ProxyOpSpec recvOp;
};

}  // namespace

ncclResult_t runRound(const std::vector<Transfer>& transfers, const RoundOptions& o,
                      std::string* why) {
  std::map<Rank*, PerRank> plan;
  for (const Transfer& t : transfers) {
    Rank* local = t.sendRank ? t.sendRank : t.recvRank;
    Connection* conn = t.send ? t.send : t.recv;
    size_t capacity = local->transport->sliceCapacity(*conn, o.protocol, o.sliceSteps);
    if (t.send && t.recv &&
        t.recvRank->transport->sliceCapacity(*t.recv, o.protocol, o.sliceSteps) != capacity) {
      return *why = "sender and receiver slice sizes differ", ncclInvalidUsage;
    }
    int nsteps = planSteps(t.nbytes, capacity, o.sliceSteps).nsteps;
    DeviceWork w{.connection = nullptr,
                 .protocol = o.protocol,
                 .sliceSteps = o.sliceSteps,
                 .chunkSteps = o.chunkSteps,
                 .nbytes = t.nbytes,
                 .sliceCapacity = capacity,
                 .seed = t.seed,
                 .mode = o.mode};
    if (t.send) {
      w.connection = t.send->device();
      plan[t.sendRank].works.push_back(w);
      plan[t.sendRank].sendOps[t.sendGroup].subs.push_back({t.send, nsteps});
    }
    if (t.recv) {
      w.connection = t.recv->device();
      plan[t.recvRank].works.push_back(w);
      plan[t.recvRank].recvOp.subs.push_back({t.recv, nsteps});
    }
  }
  std::vector<std::shared_ptr<OpCompletion>> ops;
  std::vector<std::shared_ptr<DeviceCompletion>> kernels;
  for (auto& entry : plan) {
    Rank* rank = entry.first;
    PerRank& p = entry.second;
    std::vector<ProxyOpSpec> specs;
    for (auto& s : p.sendOps) specs.push_back(s.second);
    if (!p.recvOp.subs.empty()) specs.push_back(p.recvOp);
    for (ProxyOpSpec& spec : specs) {
      spec.protocol = o.protocol;
      spec.sliceSteps = o.sliceSteps;
      spec.chunkSteps = o.chunkSteps;
      std::shared_ptr<OpCompletion> op;
      ncclResult_t res = rank->transport->post(spec, &op);
      if (res != ncclSuccess) return *why = "post failed", res;
      ops.push_back(op);
    }
    std::shared_ptr<DeviceCompletion> kernel;
    ncclResult_t res = rank->device->launch(p.works, kTimeout, &kernel);
    if (res != ncclSuccess) return *why = "launch failed", res;
    kernels.push_back(kernel);
  }
  // Device results first: a wrong byte is named there.
  for (auto& k : kernels) {
    std::string detail;
    ncclResult_t res = k->wait(kTimeout + std::chrono::seconds(5), &detail);
    if (res != ncclSuccess) return *why = "device: " + detail, res;
  }
  for (auto& op : ops) {
    std::string pending;
    ncclResult_t res = op->wait(kTimeout, &pending);
    if (res != ncclSuccess) return *why = "proxy: " + pending, res;
  }
  return ncclSuccess;
}

}  // namespace ncclnet::transport::testing
