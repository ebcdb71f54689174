// SPDX-License-Identifier: Apache-2.0
#include "scenario/collnet_session.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "harness/wire.hpp"
#include "scenario/plugin_log.hpp"

namespace conformance {

namespace {

// A v11 table seen as v12. A C function pointer carries no state, and a
// process loads one plugin library, so the v11 table is a global.
const ncclCollNet_v11_t* v11Table = nullptr;

ncclResult_t v11GetProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v11_t p{};
  ncclResult_t res = v11Table->getProperties(dev, &p);
  props->name = p.name;
  props->pciPath = p.pciPath;
  props->guid = p.guid;
  props->ptrSupport = p.ptrSupport;
  props->regIsGlobal = p.regIsGlobal;
  props->forceFlush = p.forceFlush;
  props->speed = p.speed;
  props->port = p.port;
  props->latency = p.latency;
  props->maxComms = p.maxComms;
  props->maxRecvs = p.maxRecvs;
  props->netDeviceType = p.netDeviceType;
  props->netDeviceVersion = p.netDeviceVersion;
  props->vProps.ndevs = p.vProps.ndevs;
  for (int i = 0; i < NCCL_NET_MAX_DEVS_PER_NIC_V11; i++) props->vProps.devs[i] = p.vProps.devs[i];
  props->maxP2pBytes = p.maxP2pBytes;
  props->maxCollBytes = p.maxCollBytes;
  props->maxMultiRequestSize = p.maxMultiRequestSize;
  return res;
}

// The parts are the same three fields in both versions.
ncclResult_t v11Iallgather(void* collComm, void* sendData, int nRecvParts,
                           ncclNetSGE_v12_t* recvParts, size_t bytesPerRank, size_t windowOffset,
                           size_t windowBytes, void* sendMhandle, void** request) {
  std::vector<ncclNetSGE_v11_t> parts(static_cast<size_t>(std::max(nRecvParts, 0)));
  for (size_t i = 0; i < parts.size(); i++)
    parts[i] = {recvParts[i].mhandle, recvParts[i].address, recvParts[i].size};
  return v11Table->iallgather(collComm, sendData, nRecvParts, parts.data(), bytesPerRank,
                              windowOffset, windowBytes, sendMhandle, request);
}

ncclResult_t v11Ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts,
                               void* recvData, size_t bytesPerRank, size_t windowOffset,
                               size_t windowBytes, ncclDataType_t dataType, ncclRedOp_t redOp,
                               void* recvMhandle, void** request) {
  std::vector<ncclNetSGE_v11_t> parts(static_cast<size_t>(std::max(nSendParts, 0)));
  for (size_t i = 0; i < parts.size(); i++)
    parts[i] = {sendParts[i].mhandle, sendParts[i].address, sendParts[i].size};
  return v11Table->ireducescatter(collComm, nSendParts, parts.data(), recvData, bytesPerRank,
                                  windowOffset, windowBytes, dataType, redOp, recvMhandle, request);
}

}  // namespace

const CollNetTable& collNetTableOf(Ctx& c) {
  static CollNetTable table;
  table = CollNetTable{};
  if (const auto* v12 =
          static_cast<const ncclCollNet_v12_t*>(c.plugin().symbol("ncclCollNetPlugin_v12"))) {
    table.version = 12;
    table.symbol = "ncclCollNetPlugin_v12";
    table.calls = *v12;
    return table;
  }
  v11Table = static_cast<const ncclCollNet_v11_t*>(c.plugin().symbol("ncclCollNetPlugin_v11"));
  if (v11Table == nullptr) skip("the library exports neither ncclCollNetPlugin_v12 nor _v11");
  const ncclCollNet_v11_t& t = *v11Table;
  table.version = 11;
  table.symbol = "ncclCollNetPlugin_v11";
  ncclCollNet_v12_t& v = table.calls;
  v.name = t.name;
  v.init = t.init;
  v.devices = t.devices;
  v.getProperties = t.getProperties != nullptr ? v11GetProperties : nullptr;
  v.listen = t.listen;
  v.connect = t.connect;
  v.reduceSupport = t.reduceSupport;
  v.regMr = t.regMr;
  v.regMrDmaBuf = t.regMrDmaBuf;
  v.deregMr = t.deregMr;
  v.iallreduce = t.iallreduce;
  v.iallgather = t.iallgather != nullptr ? v11Iallgather : nullptr;
  v.ireducescatter = t.ireducescatter != nullptr ? v11Ireducescatter : nullptr;
  v.iflush = t.iflush;
  v.test = t.test;
  v.closeColl = t.closeColl;
  v.closeListen = t.closeListen;
  v.makeVDevice = nullptr;  // not called here
  v.finalize = t.finalize;
  return table;
}

CollNetSession::CollNetSession(Ctx& c, Rule rule) : c_(c) {
  const CollNetTable& table = collNetTableOf(c);
  calls_ = &table.calls;
  version_ = table.version;
  const ncclCollNet_v12_t& t = *calls_;
  // NCCL initializes the net plugin first and CollNet from the same
  // library after it (src/plugin/net.cc ncclNetPluginLoad, ncclNetInit).
  c.comm();
  c.activity("CollNet init()");
  CONF_OK(t.init(&ctx_, kCollNetCommHash, pluginLogger()), rule, "CollNet init()");
  CONF_OK(t.getProperties(0, &props_), rule, "CollNet getProperties(0)");
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  c.activity("CollNet listen(device 0)");
  CONF_OK(t.listen(ctx_, 0, handle, &listenComm), rule, "CollNet listen(device 0)");
  std::vector<std::string> all = c.allgather("CollNet handles", std::string(handle, sizeof handle));
  std::vector<void*> handles;
  for (std::string& h : all) handles.push_back(h.data());
  c.activity(format("CollNet connect(%d ranks), collective", c.nranks()));
  double start = nowSeconds();
  ncclResult_t res = t.connect(handles.data(), c.nranks(), c.rank(), listenComm, &collComm_);
  double took = nowSeconds() - start;
  CONF_EXPECT(res == ncclSuccess, rule, "CollNet connect(%d ranks) returned %s", c.nranks(),
              resultText(res).c_str());
  CONF_EXPECT(collComm_ != nullptr, rule,
              "CollNet connect(%d ranks) returned success and no collComm on rank %d of a group "
              "where every rank connects",
              c.nranks(), c.rank());
  CONF_EXPECT(took <= c.waitLimit(), rule, "CollNet connect(%d ranks) took %.1f s (limit %.1f s)",
              c.nranks(), took, c.waitLimit());
  // sharedConnect closes the listen once connect succeeded.
  CONF_OK(t.closeListen(listenComm), rule, "CollNet closeListen()");
  c.barrier("CollNet connected");
}

CollNetSession::~CollNetSession() {
  // Best effort, as NCCL's teardown: a failure here was reported already
  // by the step that caused it.
  if (calls_ == nullptr) return;
  for (void* mh : mhandles_) calls_->deregMr(collComm_, mh);
  if (collComm_ != nullptr) calls_->closeColl(collComm_);
  if (ctx_ != nullptr && calls_->finalize != nullptr) calls_->finalize(ctx_);
}

void CollNetSession::teardown(Rule rule) {
  double start = nowSeconds();
  c_.activity("CollNet teardown: deregMr, closeColl, finalize");
  for (void* mh : std::exchange(mhandles_, {})) {
    CONF_OK(calls_->deregMr(collComm_, mh), rule, "CollNet deregMr()");
  }
  if (void* collComm = std::exchange(collComm_, nullptr)) {
    CONF_OK(calls_->closeColl(collComm), rule, "CollNet closeColl()");
  }
  if (void* ctx = std::exchange(ctx_, nullptr)) {
    CONF_OK(calls_->finalize(ctx), rule, "CollNet finalize()");
  }
  double took = nowSeconds() - start;
  CONF_EXPECT(took <= c_.waitLimit(), rule, "the CollNet teardown took %.1f s (limit %.1f s)", took,
              c_.waitLimit());
}

void* CollNetSession::reg(void* data, size_t size, Rule rule) {
  void* mhandle = nullptr;
  c_.activity(format("CollNet regMr(%zu B of host memory)", size));
  CONF_OK(calls_->regMr(collComm_, data, size, NCCL_PTR_HOST, &mhandle), rule,
          format("CollNet regMr(%zu B of host memory)", size));
  CONF_EXPECT(mhandle != nullptr, rule, "CollNet regMr() returned success and no mhandle");
  mhandles_.push_back(mhandle);
  return mhandle;
}

void CollNetSession::dereg(void* mhandle, Rule rule) {
  mhandles_.erase(std::find(mhandles_.begin(), mhandles_.end(), mhandle));
  CONF_OK(calls_->deregMr(collComm_, mhandle), rule, "CollNet deregMr()");
}

void CollNetSession::testAll(Rule rule) {
  for (Pending& p : pending_) {
    if (p.done) continue;
    int done = 0, size = -1;
    ncclResult_t res = calls_->test(p.request, &done, &size);
    CONF_EXPECT(res == ncclSuccess, rule, "CollNet test(%s) returned %s", p.what.c_str(),
                resultText(res).c_str());
    if (done) {
      p.done = true;
      p.size = size;
    }
  }
}

void* CollNetSession::post(const std::function<ncclResult_t(void**)>& call, const std::string& what,
                           Rule rule) {
  c_.activity("CollNet " + what);
  double end = nowSeconds() + c_.waitLimit();
  for (uint64_t tries = 1;; tries++) {
    void* request = nullptr;
    ncclResult_t res = call(&request);
    CONF_EXPECT(res == ncclSuccess, rule, "CollNet %s returned %s", what.c_str(),
                resultText(res).c_str());
    if (request != nullptr) {
      pending_.push_back(Pending{request, what, false, -1});
      return request;
    }
    nulls_++;
    c_.count("collNetNullRequests");
    testAll(rule);
    if (tries % 64 == 0) {
      CONF_EXPECT(nowSeconds() < end, rule,
                  "CollNet %s still returned a NULL request after %.1f s (%llu posts), with %zu "
                  "of this rank's operations in flight",
                  what.c_str(), c_.waitLimit(), static_cast<unsigned long long>(tries),
                  static_cast<size_t>(std::count_if(pending_.begin(), pending_.end(),
                                                    [](const Pending& p) { return !p.done; })));
      sched_yield();
    }
  }
}

void* CollNetSession::allReduce(void* send, void* recv, size_t count, ncclDataType_t type,
                                ncclRedOp_t op, void* sendMh, void* recvMh, const std::string& what,
                                Rule rule) {
  return post(
      [&](void** request) {
        return calls_->iallreduce(collComm_, send, recv, count, type, op, sendMh, recvMh, request);
      },
      "iallreduce(" + what + ")", rule);
}

void* CollNetSession::allGather(void* send, ncclNetSGE_v12_t* parts, int nParts,
                                size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                void* sendMh, const std::string& what, Rule rule) {
  return post(
      [&](void** request) {
        return calls_->iallgather(collComm_, send, nParts, parts, bytesPerRank, windowOffset,
                                  windowBytes, sendMh, request);
      },
      "iallgather(" + what + ")", rule);
}

void* CollNetSession::reduceScatter(ncclNetSGE_v12_t* parts, int nParts, void* recv,
                                    size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                    ncclDataType_t type, ncclRedOp_t op, void* recvMh,
                                    const std::string& what, Rule rule) {
  return post(
      [&](void** request) {
        return calls_->ireducescatter(collComm_, nParts, parts, recv, bytesPerRank, windowOffset,
                                      windowBytes, type, op, recvMh, request);
      },
      "ireducescatter(" + what + ")", rule);
}

bool CollNetSession::progress(void* request, int* size, Rule rule) {
  testAll(rule);
  auto it = std::find_if(pending_.begin(), pending_.end(),
                         [&](const Pending& p) { return p.request == request; });
  if (it == pending_.end() || !it->done) return false;
  if (size != nullptr) *size = it->size;
  pending_.erase(it);
  return true;
}

int CollNetSession::wait(void* request, const std::string& what, Rule rule) {
  c_.activity("CollNet test(" + what + ") until done");
  double end = nowSeconds() + c_.waitLimit();
  for (uint64_t polls = 1;; polls++) {
    int size = -1;
    if (progress(request, &size, rule)) return size;
    if (polls % 64 == 0) {
      CONF_EXPECT(nowSeconds() < end, rule, "CollNet test(%s) still not done after %.1f s",
                  what.c_str(), c_.waitLimit());
      sched_yield();
    }
  }
}

}  // namespace conformance
