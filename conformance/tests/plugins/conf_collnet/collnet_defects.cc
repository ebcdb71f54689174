// SPDX-License-Identifier: Apache-2.0
// conf-collnet: ncclCollNetPlugin_v12 and _v11 tables that forward to a
// correct CollNet (ncclCollNetPlugin_v12 of the library named by
// CONF_COLLNET_INNER, sdk-socket's in the suite's tests) and plant one
// defect, chosen by CONF_COLLNET_DEFECT, where a vendor's CollNet goes
// wrong. Each defect breaks one MUST rule of the CollNet area (80-87); the
// suite's tests expect that rule to fail (conformance/tests/CMakeLists.txt).
//
// The library's net table is conf-tcp's (two devices on 127.0.0.1), so the
// suite can load it. The CollNet side describes those two devices, as a
// vendor's CollNet describes its own NICs (rule 81): devices() and every
// property NCCL's topology reads come from the library's own net table,
// and every CollNet device runs on the inner CollNet's device 0.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "ncclnet/abi/collnet_v11.h"
#include "ncclnet/abi/collnet_v12.h"
#include "ncclnet/abi/net_v12.h"

// conf-tcp's table, defined in the same library (conf_tcp.cc).
extern "C" const ncclNet_v12_t ncclNetPlugin_v12;

namespace {

enum class Defect {
  None,
  MaxCollBytesZero,      // 80: getProperties reports maxCollBytes 0
  PropsDisagreeWithNet,  // 81: device 1's speed is not the net table's
  ClaimsGpuDirect,       // 81: ptrSupport offers CUDA memory, which the net table does not
  RefusalHangsOthers,    // 82: closeListen keeps listening, so a rank that declines blocks the rest
  SupportDiffersByRank,  // 83: rank 1 answers float32 prod the other way
  SumOffByOne,           // 84: one element of every float32 sum is 1 too large
  InPlaceBroken,         // 84: an in-place all-reduce loses this rank's contribution
  DropsOpsPast8,         // 85: the 9th operation in flight and later are done at once, never run
  WindowOffsetIgnored,   // 86: iallgather always delivers the window at offset 0
  V11NullAllgather,      // 87: ncclCollNetPlugin_v11.iallgather is NULL
};

struct DefectName {
  const char* name;
  Defect defect;
};
constexpr DefectName kDefects[] = {
    {"max-coll-bytes-zero", Defect::MaxCollBytesZero},
    {"props-disagree-with-net", Defect::PropsDisagreeWithNet},
    {"claims-gpudirect", Defect::ClaimsGpuDirect},
    {"refusal-hangs-others", Defect::RefusalHangsOthers},
    {"support-differs-by-rank", Defect::SupportDiffersByRank},
    {"sum-off-by-one", Defect::SumOffByOne},
    {"in-place-broken", Defect::InPlaceBroken},
    {"drops-ops-past-8", Defect::DropsOpsPast8},
    {"window-offset-ignored", Defect::WindowOffsetIgnored},
    {"v11-null-allgather", Defect::V11NullAllgather},
};

// A request this table hands out.
struct Request {
  void* inner = nullptr;     // nullptr: done at once (DropsOpsPast8)
  float* perturb = nullptr;  // SumOffByOne: the element to change when done
};

// What the C ABI forces: the inner table and what the defects remember,
// shared by every call.
struct State {
  std::mutex mutex;
  const ncclCollNet_v12_t* inner = nullptr;
  void* library = nullptr;
  Defect defect = Defect::None;
  bool defectKnown = true;
  int rank = -1;        // of the last connect (SupportDiffersByRank)
  int outstanding = 0;  // requests handed out and not yet done
};
State state;

ncclResult_t say(const char* what) {
  std::fprintf(stderr, "conf-collnet: %s\n", what);
  return ncclInvalidUsage;
}

// The defect is read when the library is loaded: the v11 table is data the
// suite reads before any call.
void readDefect() {
  const char* defect = std::getenv("CONF_COLLNET_DEFECT");
  if (defect == nullptr || defect[0] == '\0') return;
  state.defectKnown = false;
  for (const DefectName& d : kDefects) {
    if (std::strcmp(d.name, defect) == 0) {
      state.defect = d.defect;
      state.defectKnown = true;
    }
  }
}

ncclResult_t load() {
  if (!state.defectKnown) return say("unknown CONF_COLLNET_DEFECT");
  if (state.inner != nullptr) return ncclSuccess;
  const char* path = std::getenv("CONF_COLLNET_INNER");
  if (path == nullptr) return say("CONF_COLLNET_INNER names no library with ncclCollNetPlugin_v12");
  state.library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (state.library == nullptr) return say(dlerror());
  state.inner =
      static_cast<const ncclCollNet_v12_t*>(dlsym(state.library, "ncclCollNetPlugin_v12"));
  if (state.inner == nullptr) return say("CONF_COLLNET_INNER has no ncclCollNetPlugin_v12");
  return ncclSuccess;
}

const ncclCollNet_v12_t& in() {
  return *state.inner;
}

ncclResult_t init(void** ctx, uint64_t commId, ncclDebugLogger_t logger) {
  ncclResult_t res = load();
  if (res != ncclSuccess) return res;
  return in().init(ctx, commId, logger);
}

// The library's own net devices (conf-tcp's), whatever the inner has.
ncclResult_t devices(int* ndev) {
  return ncclNetPlugin_v12.devices(ndev);
}

ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v12_t net{};
  ncclResult_t res = ncclNetPlugin_v12.getProperties(dev, &net);
  if (res != ncclSuccess) return res;
  res = in().getProperties(0, props);
  if (res != ncclSuccess) return res;
  props->name = net.name;
  props->pciPath = net.pciPath;
  props->guid = net.guid;
  props->speed = net.speed;
  props->port = net.port;
  props->latency = net.latency;
  props->maxComms = net.maxComms;
  if (state.defect == Defect::MaxCollBytesZero) props->maxCollBytes = 0;
  if (state.defect == Defect::PropsDisagreeWithNet && dev == 1) props->speed = net.speed * 2;
  if (state.defect == Defect::ClaimsGpuDirect) props->ptrSupport |= NCCL_PTR_CUDA;
  return ncclSuccess;
}

// RefusalHangsOthers: the inner listen stays open after closeListen.
ncclResult_t listen(void* ctx, int, void* handle, void** listenComm) {
  return in().listen(ctx, 0, handle, listenComm);
}

ncclResult_t connect(void* handles[], int nranks, int rank, void* listenComm, void** collComm) {
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.rank = rank;
  }
  return in().connect(handles, nranks, rank, listenComm, collComm);
}

ncclResult_t reduceSupport(ncclDataType_t type, ncclRedOp_t op, int* supported) {
  ncclResult_t res = in().reduceSupport(type, op, supported);
  if (res == ncclSuccess && state.defect == Defect::SupportDiffersByRank && state.rank == 1 &&
      type == ncclFloat32 && op == ncclProd)
    *supported = !*supported;
  return res;
}

ncclResult_t regMr(void* collComm, void* data, size_t size, int type, void** mhandle) {
  return in().regMr(collComm, data, size, type, mhandle);
}

ncclResult_t regMrDmaBuf(void* collComm, void* data, size_t size, int type, uint64_t offset, int fd,
                         void** mhandle) {
  if (in().regMrDmaBuf == nullptr) return ncclInternalError;
  return in().regMrDmaBuf(collComm, data, size, type, offset, fd, mhandle);
}

ncclResult_t deregMr(void* collComm, void* mhandle) {
  return in().deregMr(collComm, mhandle);
}

// Wraps an inner request; a NULL inner one stays NULL ("post again").
ncclResult_t wrap(ncclResult_t res, void* inner, float* perturb, void** request) {
  if (res != ncclSuccess || inner == nullptr) {
    *request = nullptr;
    return res;
  }
  std::lock_guard<std::mutex> lock(state.mutex);
  *request = new Request{inner, perturb};
  state.outstanding++;
  return ncclSuccess;
}

size_t eltSize(ncclDataType_t type) {
  switch (type) {
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    default: return 1;
  }
}

ncclResult_t iallreduce(void* collComm, void* sendData, void* recvData, size_t count,
                        ncclDataType_t type, ncclRedOp_t op, void* sendMh, void* recvMh,
                        void** request) {
  if (state.defect == Defect::DropsOpsPast8) {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.outstanding >= 8) {
      *request = new Request{};
      state.outstanding++;
      return ncclSuccess;
    }
  }
  if (state.defect == Defect::InPlaceBroken && sendData == recvData)
    std::memset(recvData, 0, count * eltSize(type));
  float* perturb = nullptr;
  if (state.defect == Defect::SumOffByOne && type == ncclFloat32 && op == ncclSum && count > 0)
    perturb = static_cast<float*>(recvData) + count / 2;
  void* inner = nullptr;
  ncclResult_t res =
      in().iallreduce(collComm, sendData, recvData, count, type, op, sendMh, recvMh, &inner);
  return wrap(res, inner, perturb, request);
}

ncclResult_t iallgather(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v12_t* recvParts,
                        size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMh,
                        void** request) {
  if (state.defect == Defect::WindowOffsetIgnored) windowOffset = 0;
  void* inner = nullptr;
  ncclResult_t res = in().iallgather(collComm, sendData, nRecvParts, recvParts, bytesPerRank,
                                     windowOffset, windowBytes, sendMh, &inner);
  return wrap(res, inner, nullptr, request);
}

ncclResult_t ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts,
                            void* recvData, size_t bytesPerRank, size_t windowOffset,
                            size_t windowBytes, ncclDataType_t type, ncclRedOp_t op, void* recvMh,
                            void** request) {
  void* inner = nullptr;
  ncclResult_t res = in().ireducescatter(collComm, nSendParts, sendParts, recvData, bytesPerRank,
                                         windowOffset, windowBytes, type, op, recvMh, &inner);
  return wrap(res, inner, nullptr, request);
}

ncclResult_t iflush(void* collComm, void* data, int size, void* mhandle, void** request) {
  void* inner = nullptr;
  ncclResult_t res = in().iflush(collComm, data, size, mhandle, &inner);
  return wrap(res, inner, nullptr, request);
}

ncclResult_t test(void* request, int* done, int* size) {
  auto* r = static_cast<Request*>(request);
  if (r->inner == nullptr) {
    *done = 1;
    if (size != nullptr) *size = 0;
  } else {
    ncclResult_t res = in().test(r->inner, done, size);
    if (res != ncclSuccess || !*done) return res;
    if (r->perturb != nullptr) *r->perturb += 1.0f;
  }
  std::lock_guard<std::mutex> lock(state.mutex);
  state.outstanding--;
  delete r;
  return ncclSuccess;
}

ncclResult_t closeColl(void* collComm) {
  return in().closeColl(collComm);
}

ncclResult_t closeListen(void* listenComm) {
  if (state.defect == Defect::RefusalHangsOthers) return ncclSuccess;
  return in().closeListen(listenComm);
}

ncclResult_t finalize(void* ctx) {
  return in().finalize(ctx);
}

// ---- the v11 table: v12's members, properties and parts converted --------

ncclResult_t getPropertiesV11(int dev, ncclNetProperties_v11_t* props) {
  ncclNetProperties_v12_t p{};
  ncclResult_t res = getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  *props = ncclNetProperties_v11_t{};
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
  props->vProps.ndevs = p.vProps.ndevs < NCCL_NET_MAX_DEVS_PER_NIC_V11
                            ? p.vProps.ndevs
                            : NCCL_NET_MAX_DEVS_PER_NIC_V11;
  for (int i = 0; i < props->vProps.ndevs; i++) props->vProps.devs[i] = p.vProps.devs[i];
  props->maxP2pBytes = p.maxP2pBytes;
  props->maxCollBytes = p.maxCollBytes;
  props->maxMultiRequestSize = p.maxMultiRequestSize;
  return ncclSuccess;
}

std::vector<ncclNetSGE_v12_t> partsOf(int n, const ncclNetSGE_v11_t* parts) {
  std::vector<ncclNetSGE_v12_t> out;
  for (int i = 0; i < n; i++) out.push_back({parts[i].mhandle, parts[i].address, parts[i].size});
  return out;
}

ncclResult_t iallgatherV11(void* collComm, void* sendData, int nRecvParts,
                           ncclNetSGE_v11_t* recvParts, size_t bytesPerRank, size_t windowOffset,
                           size_t windowBytes, void* sendMh, void** request) {
  std::vector<ncclNetSGE_v12_t> parts = partsOf(nRecvParts, recvParts);
  return iallgather(collComm, sendData, nRecvParts, parts.data(), bytesPerRank, windowOffset,
                    windowBytes, sendMh, request);
}

ncclResult_t ireducescatterV11(void* collComm, int nSendParts, ncclNetSGE_v11_t* sendParts,
                               void* recvData, size_t bytesPerRank, size_t windowOffset,
                               size_t windowBytes, ncclDataType_t type, ncclRedOp_t op,
                               void* recvMh, void** request) {
  std::vector<ncclNetSGE_v12_t> parts = partsOf(nSendParts, sendParts);
  return ireducescatter(collComm, nSendParts, parts.data(), recvData, bytesPerRank, windowOffset,
                        windowBytes, type, op, recvMh, request);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const ncclCollNet_v12_t ncclCollNetPlugin_v12 = {
    "conf-collnet", init,          devices,        getProperties, listen,
    connect,        reduceSupport, regMr,          regMrDmaBuf,   deregMr,
    iallreduce,     iallgather,    ireducescatter, iflush,        test,
    closeColl,      closeListen,   nullptr,        finalize};

// Not const: V11NullAllgather clears a member when the library is loaded.
extern "C" {
__attribute__((visibility("default"))) ncclCollNet_v11_t ncclCollNetPlugin_v11 = {
    "conf-collnet",    init,   devices,     getPropertiesV11, listen,      connect,
    reduceSupport,     regMr,  regMrDmaBuf, deregMr,          iallreduce,  iallgatherV11,
    ireducescatterV11, iflush, test,        closeColl,        closeListen, nullptr,
    finalize};
}

namespace {
__attribute__((constructor)) void applyDefectAtLoad() {
  readDefect();
  if (state.defect == Defect::V11NullAllgather) ncclCollNetPlugin_v11.iallgather = nullptr;
}
}  // namespace
