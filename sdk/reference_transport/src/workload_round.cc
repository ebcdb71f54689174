// SPDX-License-Identifier: Apache-2.0
// One round of NCCL-shaped traffic: proxy operations and device works
// planned the way one NCCL kernel launch would be.
#include <map>
#include <thread>

#include "ncclnet/transport/host_device_peer.hpp"
#include "ncclnet/transport/pattern.hpp"
#include "ncclnet/transport/workload.hpp"

namespace ncclnet::transport {

using Clock = std::chrono::steady_clock;

ncclResult_t makeRank(host::NetView& net, RankOptions options, Rank* out) {
  ncclResult_t res = Transport::create(net, std::move(options.transport), &out->transport);
  if (res != ncclSuccess) return res;
  out->device = options.makeDevice ? options.makeDevice() : std::make_unique<HostDevicePeer>();
  return out->device ? ncclSuccess : ncclSystemError;
}

ncclResult_t connectAll(const std::vector<std::pair<Connection*, const NetHandle*>>& sends,
                        const std::vector<Connection*>& recvs, std::chrono::milliseconds timeout,
                        std::string* why) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    bool pending = false;
    for (auto& s : sends) {
      ncclResult_t res = s.first->connect(*s.second);
      if (res == ncclInProgress) {
        pending = true;
      } else if (res != ncclSuccess) {
        *why = "connect failed on " + s.first->describe();
        return res;
      }
    }
    for (Connection* r : recvs) {
      ncclResult_t res = r->accept();
      if (res == ncclInProgress) {
        pending = true;
      } else if (res != ncclSuccess) {
        *why = "accept failed on " + r->describe();
        return res;
      }
    }
    if (!pending) return ncclSuccess;
    if (Clock::now() > deadline) {
      *why = "connect/accept did not finish in " + std::to_string(timeout.count()) + " ms";
      return ncclTimeout;
    }
    std::this_thread::yield();
  }
}

uint64_t seedFor(int round, int link) {
  return patternWord(0x5eed, static_cast<uint64_t>(round) * 1000003u + link);
}

namespace {

// What one rank launches in a round.
struct RankPlan {
  std::vector<DeviceWork> works;
  std::map<int, ProxyOpSpec> sendOps;  // by send group
  ProxyOpSpec recvOp;
};

}  // namespace

ncclResult_t runRound(const std::vector<Transfer>& transfers, const RoundOptions& o,
                      std::chrono::milliseconds timeout, std::string* why) {
  std::map<Rank*, RankPlan> plan;
  for (const Transfer& t : transfers) {
    Rank* local = t.sendRank ? t.sendRank : t.recvRank;
    Connection* conn = t.send ? t.send : t.recv;
    size_t capacity = local->transport->sliceCapacity(*conn, o.protocol, o.sliceSteps);
    if (t.send && t.recv &&
        t.recvRank->transport->sliceCapacity(*t.recv, o.protocol, o.sliceSteps) != capacity) {
      *why = "sender and receiver slice sizes differ";
      return ncclInvalidUsage;
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
  for (auto& [rank, p] : plan) {
    std::vector<ProxyOpSpec> specs;
    for (auto& s : p.sendOps) specs.push_back(s.second);
    if (!p.recvOp.subs.empty()) specs.push_back(p.recvOp);
    for (ProxyOpSpec& spec : specs) {
      spec.protocol = o.protocol;
      spec.sliceSteps = o.sliceSteps;
      spec.chunkSteps = o.chunkSteps;
      std::shared_ptr<OpCompletion> op;
      ncclResult_t res = rank->transport->post(spec, &op);
      if (res != ncclSuccess) {
        *why = "post failed";
        return res;
      }
      ops.push_back(op);
    }
    std::shared_ptr<DeviceCompletion> kernel;
    ncclResult_t res = rank->device->launch(p.works, timeout, &kernel);
    if (res != ncclSuccess) {
      *why = "launch failed";
      return res;
    }
    kernels.push_back(kernel);
  }
  // Device results first: a wrong byte is named there.
  for (auto& k : kernels) {
    std::string detail;
    ncclResult_t res = k->wait(timeout + std::chrono::seconds(5), &detail);
    if (res != ncclSuccess) {
      *why = "device: " + detail;
      return res;
    }
  }
  for (auto& op : ops) {
    std::string pending;
    ncclResult_t res = op->wait(timeout, &pending);
    if (res != ncclSuccess) {
      *why = "proxy: " + pending;
      return res;
    }
  }
  return ncclSuccess;
}

}  // namespace ncclnet::transport
