// SPDX-License-Identifier: Apache-2.0
// One round of NCCL-shaped traffic: proxy operations and device works
// planned the way one NCCL kernel launch would be.
#include <algorithm>
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

// A registered user buffer for one end of a transfer, deregistered and
// freed when the round ends.
struct UserBuffer {
  Connection* connection = nullptr;
  Allocation memory;
  void* mhandle = nullptr;
  ~UserBuffer() {
    if (mhandle != nullptr) connection->deregisterBuffer(mhandle);
  }
};

ncclResult_t makeUserBuffer(Rank& rank, Connection* connection, size_t nbytes,
                            std::unique_ptr<UserBuffer>* out, std::string* why) {
  auto b = std::make_unique<UserBuffer>();
  b->connection = connection;
  ncclResult_t res = rank.transport->memory().allocHost(std::max<size_t>(nbytes, 1), &b->memory);
  if (res == ncclSuccess)
    res = connection->registerBuffer(b->memory.cpu(), b->memory.size(), false, &b->mhandle);
  if (res != ncclSuccess) {
    *why = "registering a " + std::to_string(nbytes) + "-byte user buffer failed";
    return res;
  }
  *out = std::move(b);
  return ncclSuccess;
}

// What one rank launches in a round.
struct RankPlan {
  std::vector<DeviceWork> works;
  std::map<int, ProxyOpSpec> sendOps;  // by send group
  ProxyOpSpec recvOp;
};

// Posts every rank's proxy operations, launches its kernel, and waits for
// all of them.
ncclResult_t launchAndWait(std::map<Rank*, RankPlan>& plan, const RoundOptions& o,
                           std::chrono::milliseconds timeout, std::string* why) {
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

}  // namespace

ncclResult_t runRound(const std::vector<Transfer>& transfers, const RoundOptions& options,
                      std::chrono::milliseconds timeout, std::string* why) {
  if (options.registered && (options.protocol != Protocol::Simple || options.sliceSteps != 1)) {
    *why = "registered buffers take SIMPLE with sliceSteps 1";
    return ncclInvalidArgument;
  }
  RoundOptions o = options;
  // Every end's user buffer is registered before the steps are planned: a
  // NULL mhandle is a registration NCCL does not use (src/transport/net.cc
  // netRegisterBuffer takes it as a failure and src/enqueue.cc
  // addP2pToPlan then copies through the connection's buffers), so the
  // round then runs unregistered, and the buffers go when it ends.
  std::map<std::pair<const Transfer*, bool>, std::unique_ptr<UserBuffer>> made;
  if (o.registered) {
    for (const Transfer& t : transfers) {
      for (bool sending : {true, false}) {
        Connection* end = sending ? t.send : t.recv;
        if (end == nullptr) continue;
        std::unique_ptr<UserBuffer> b;
        ncclResult_t res =
            makeUserBuffer(*(sending ? t.sendRank : t.recvRank), end, t.nbytes, &b, why);
        if (res != ncclSuccess) return res;
        if (b->mhandle == nullptr) o.registered = false;
        made[{&t, sending}] = std::move(b);
      }
    }
  }
  std::map<Rank*, RankPlan> plan;
  std::vector<std::unique_ptr<UserBuffer>> userBuffers;  // outlive the round's waits
  for (const Transfer& t : transfers) {
    Rank* local = t.sendRank ? t.sendRank : t.recvRank;
    Connection* conn = t.send ? t.send : t.recv;
    auto capacityOn = [&](Rank* rank, Connection* c) {
      return o.registered ? rank->transport->config().maxNetSize
                          : rank->transport->sliceCapacity(*c, o.protocol, o.sliceSteps);
    };
    size_t capacity = capacityOn(local, conn);
    if (t.send && t.recv && capacityOn(t.recvRank, t.recv) != capacity) {
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
    for (bool sending : {true, false}) {
      Connection* end = sending ? t.send : t.recv;
      Rank* rank = sending ? t.sendRank : t.recvRank;
      if (end == nullptr) continue;
      SubOpSpec sub{end, nsteps};
      w.connection = end->device();
      w.userBuffer = nullptr;
      if (o.registered) {
        std::unique_ptr<UserBuffer> b = std::move(made[{&t, sending}]);
        sub.userBuffer = b->memory.cpu();
        sub.userBytes = t.nbytes;
        sub.userMhandle = b->mhandle;
        w.userBuffer = b->memory.gpu();
        userBuffers.push_back(std::move(b));
      }
      plan[rank].works.push_back(w);
      if (sending) {
        plan[rank].sendOps[t.sendGroup].subs.push_back(sub);
      } else {
        plan[rank].recvOp.subs.push_back(sub);
      }
    }
  }
  ncclResult_t res = launchAndWait(plan, o, timeout, why);
  // A failed round may leave device works or plugin requests on the user
  // buffers: they are left allocated and registered rather than freed under
  // them.
  if (res != ncclSuccess) {
    for (auto& b : userBuffers) (void)b.release();
  }
  return res;
}

}  // namespace ncclnet::transport
