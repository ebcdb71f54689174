// SPDX-License-Identifier: Apache-2.0
// sdk-rma-defects: a one-sided engine inside one process, for the checker's
// one-sided tests: ncclRmaPlugin_v14, ncclRmaPlugin_v13, ncclGinPlugin_v13
// and ncclGinPlugin_v11 over the same functions, beside sdk-testnet's net
// tables. Puts copy at once
// between the registrations of rank 0 (the only rank), and test() reports
// a request done at its first call. NCCLNET_RMA_DEFECT, read when the
// library loads, breaks one thing the checker judges:
//
//   null-request     iput, iputSignal and iget succeed with a NULL request
//   refuse-at=N      iput, iputSignal and iget fail once N are outstanding
//   reused-request   every request is the same pointer
//   odd-maxrecvs     maxRecvs 3
//   not-proxy        netDeviceType HOST
//   no-host          ptrSupport without NCCL_PTR_HOST
//   missing-iget     ncclRmaPlugin_v14.iget is NULL
//   names-differ     ncclGinPlugin_v11 has another name than ncclRmaPlugin_v14
//
// Anything else (or unset): a correct engine. iflush always answers NULL
// (nothing to wait for), which is legal.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/net_device.h"
#include "ncclnet/abi/rma.h"

namespace {

struct Defect {
  std::string name;
  int refuseAt = 0;  // 0: never refuse
};
// Read at first use: the library constructor below may run before this
// file's dynamic initializers.
const Defect& defect() {
  static const Defect read = [] {
    Defect d;
    const char* value = std::getenv("NCCLNET_RMA_DEFECT");
    d.name = value ? value : "";
    if (d.name.rfind("refuse-at=", 0) == 0) d.refuseAt = std::atoi(value + 10);
    return d;
  }();
  return read;
}

bool is(const char* name) {
  return defect().name == name;
}

struct Mr {
  char* base;
  size_t size;
};

// Requests are slots of a ring, reused only after a full turn, so a correct
// engine never hands out a request that is still outstanding.
constexpr int kSlots = 4096;
char slots[kSlots];
std::mutex mutex;
int nextSlot = 0;
int outstanding = 0;

int listenToken, collToken, ctxToken, engineToken;

ncclResult_t initAny(void** ctx, uint64_t, ncclDebugLogger_t) {
  *ctx = &engineToken;
  return ncclSuccess;
}
ncclResult_t devices(int* ndev) {
  *ndev = 1;
  return ncclSuccess;
}
template <class Props>
ncclResult_t getProperties(int dev, Props* props) {
  if (dev != 0) return ncclInvalidArgument;
  std::memset(props, 0, sizeof(*props));
  props->name = const_cast<char*>("rma-defects");
  props->ptrSupport = is("no-host") ? NCCL_PTR_CUDA : NCCL_PTR_HOST;
  props->speed = 1000;
  props->maxComms = 1;
  props->maxRecvs = is("odd-maxrecvs") ? 3 : 1;
  props->netDeviceType = is("not-proxy") ? NCCL_NET_DEVICE_HOST : NCCL_NET_DEVICE_GIN_PROXY;
  props->maxP2pBytes = 1 << 30;
  props->maxCollBytes = 1 << 30;
  return ncclSuccess;
}
ncclResult_t listen(void*, int, void* handle, void** listenComm) {
  std::memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
  *listenComm = &listenToken;
  return ncclSuccess;
}
ncclResult_t connect(void*, void**, int nranks, int rank, void*, void** collComm) {
  if (nranks != 1 || rank != 0) return ncclInvalidUsage;
  *collComm = &collToken;
  return ncclSuccess;
}
ncclResult_t createContext(void*, ncclRmaConfig_v14_t*, void** rmaCtx) {
  *rmaCtx = &ctxToken;
  return ncclSuccess;
}
ncclResult_t regMrSym(void*, void* data, size_t size, int, uint64_t, void** mhandle) {
  *mhandle = new Mr{static_cast<char*>(data), size};
  return ncclSuccess;
}
ncclResult_t deregMrSym(void*, void* mhandle) {
  delete static_cast<Mr*>(mhandle);
  return ncclSuccess;
}
ncclResult_t nothing(void*) {
  return ncclSuccess;
}

// One operation: copies, then hands out its request (or the defect).
ncclResult_t post(Mr* from, uint64_t fromOff, Mr* to, uint64_t toOff, size_t size, void** request) {
  std::lock_guard<std::mutex> lock(mutex);
  *request = nullptr;
  if (defect().refuseAt > 0 && outstanding >= defect().refuseAt) return ncclInternalError;
  if (size > 0) std::memcpy(to->base + toOff, from->base + fromOff, size);
  if (is("null-request")) return ncclSuccess;
  *request = is("reused-request") ? &slots[0] : &slots[nextSlot++ % kSlots];
  outstanding++;
  return ncclSuccess;
}
ncclResult_t signal(Mr* signalMr, uint64_t signalOff, uint64_t value, uint32_t op) {
  auto* word = reinterpret_cast<uint64_t*>(signalMr->base + signalOff);
  *word += op == NCCL_NET_SIGNAL_OP_INC ? 1 : value;
  return ncclSuccess;
}

ncclResult_t iput(void*, int, uint64_t srcOff, void* src, size_t size, uint64_t dstOff, void* dst,
                  uint32_t, void** request) {
  return post(static_cast<Mr*>(src), srcOff, static_cast<Mr*>(dst), dstOff, size, request);
}
ncclResult_t iputSignal(void*, int, uint64_t srcOff, void* src, size_t size, uint64_t dstOff,
                        void* dst, uint32_t, uint64_t signalOff, void* signalMr, uint64_t value,
                        uint32_t op, bool, void** request) {
  ncclResult_t res =
      post(static_cast<Mr*>(src), srcOff, static_cast<Mr*>(dst), dstOff, size, request);
  if (res == ncclSuccess) signal(static_cast<Mr*>(signalMr), signalOff, value, op);
  return res;
}
ncclResult_t iget(void*, int, uint64_t remoteOff, void* remote, size_t size, uint64_t localOff,
                  void* local, uint32_t, void** request) {
  return post(static_cast<Mr*>(remote), remoteOff, static_cast<Mr*>(local), localOff, size,
              request);
}
ncclResult_t iflush(void*, int, void*, uint32_t, void** request) {
  *request = nullptr;
  return ncclSuccess;
}
ncclResult_t test(void*, void* request, int* done) {
  std::lock_guard<std::mutex> lock(mutex);
  if (request != nullptr) outstanding--;
  *done = 1;
  return ncclSuccess;
}
ncclResult_t queryLastError(void*, bool* hasError) {
  *hasError = false;
  return ncclSuccess;
}

// GIN v11: the same engine, on the collComm.
ncclResult_t ginCreateContext(void*, int, int, void** ginCtx, ncclNetDeviceHandle_v11_t** dev) {
  *ginCtx = &ctxToken;
  if (dev != nullptr) *dev = nullptr;
  return ncclSuccess;
}
ncclResult_t ginRegMrSym(void* coll, void* data, size_t size, int type, uint64_t flags,
                         void** mhandle, void** ginHandle) {
  if (ginHandle != nullptr) *ginHandle = nullptr;
  return regMrSym(coll, data, size, type, flags, mhandle);
}
ncclResult_t ginRegMrSymDmaBuf(void*, void*, size_t, int, uint64_t, int, uint64_t, void**, void**) {
  return ncclInvalidUsage;
}
ncclResult_t ginIput(void* coll, uint64_t srcOff, void* src, size_t size, uint64_t dstOff,
                     void* dst, uint32_t rank, void** request) {
  return iput(coll, 0, srcOff, src, size, dstOff, dst, rank, request);
}
ncclResult_t ginIputSignal(void* coll, uint64_t srcOff, void* src, size_t size, uint64_t dstOff,
                           void* dst, uint32_t rank, uint64_t signalOff, void* signalMr,
                           uint64_t value, uint32_t op, void** request) {
  return iputSignal(coll, 0, srcOff, src, size, dstOff, dst, rank, signalOff, signalMr, value, op,
                    true, request);
}

// GIN v13 / RMA v13: the v14 engine with GIN v13's context and signal.
ncclResult_t v13CreateContext(void*, ncclGinConfig_v13_t*, void** ginCtx,
                              ncclNetDeviceHandle_v11_t** dev) {
  *ginCtx = &ctxToken;
  if (dev != nullptr) *dev = nullptr;
  return ncclSuccess;
}
ncclResult_t v13IputSignal(void* ctx, int context, uint64_t srcOff, void* src, size_t size,
                           uint64_t dstOff, void* dst, uint32_t rank, uint64_t signalOff,
                           void* signalMr, uint64_t value, uint32_t op, void** request) {
  return iputSignal(ctx, context, srcOff, src, size, dstOff, dst, rank, signalOff, signalMr, value,
                    op, true, request);
}
// One v13 table, exported under both of its names.
constexpr ncclGin_v13_t kV13 = {"sdk-rma-defects",
                                initAny,
                                devices,
                                getProperties<ncclNetProperties_v12_t>,
                                listen,
                                connect,
                                v13CreateContext,
                                ginRegMrSym,
                                ginRegMrSymDmaBuf,
                                deregMrSym,
                                nothing,
                                nothing,
                                nothing,
                                iput,
                                v13IputSignal,
                                iget,
                                iflush,
                                test,
                                nothing,
                                queryLastError,
                                nothing};

}  // namespace

extern "C" {
__attribute__((visibility("default"))) ncclRma_v13_t ncclRmaPlugin_v13 = kV13;
__attribute__((visibility("default"))) ncclGin_v13_t ncclGinPlugin_v13 = kV13;
__attribute__((visibility("default")))
ncclRma_v14_t ncclRmaPlugin_v14 = {"sdk-rma-defects",
                                   initAny,
                                   devices,
                                   getProperties<ncclNetProperties_v12_t>,
                                   listen,
                                   connect,
                                   createContext,
                                   regMrSym,
                                   nullptr,
                                   deregMrSym,
                                   nothing,
                                   nothing,
                                   nothing,
                                   iput,
                                   iputSignal,
                                   iget,
                                   iflush,
                                   test,
                                   nullptr,
                                   queryLastError,
                                   nothing};
__attribute__((visibility("default")))
ncclGin_v11_t ncclGinPlugin_v11 = {"sdk-rma-defects",
                                   initAny,
                                   devices,
                                   getProperties<ncclNetProperties_v11_t>,
                                   listen,
                                   connect,
                                   ginCreateContext,
                                   ginRegMrSym,
                                   ginRegMrSymDmaBuf,
                                   deregMrSym,
                                   nothing,
                                   nothing,
                                   nothing,
                                   ginIput,
                                   ginIputSignal,
                                   test,
                                   nothing,
                                   queryLastError,
                                   nothing};
}

namespace {
// Runs inside dlopen, before the checker copies the tables.
__attribute__((constructor)) void breakTables() {
  if (is("missing-iget")) ncclRmaPlugin_v14.iget = nullptr;
  if (is("names-differ")) ncclGinPlugin_v11.name = "sdk-rma-defects-gin";
}
}  // namespace
