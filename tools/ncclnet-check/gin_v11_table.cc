// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the checker's ncclGinPlugin_v11 over the wrapped plugin's
// (one_sided.hpp): what NCCL 2.28 loads from the net plugin's library. Its
// proxy (src/gin/gin_host_proxy.cc) posts iput and iputSignal on the
// collComm itself, one queue of 32 x maxRecvs slots per peer, and tests
// each slot's request until done.
//
// Which members NCCL calls depends on the device type (the proxy never
// calls createContext, GDAKI never iput), so the table's members are not
// judged here; the RMA v14 table's are.
#include "ncclnet/abi/gin.h"
#include "one_sided.hpp"

namespace ncclnet::check {

namespace {

const ncclGin_v11_t* inner = nullptr;
ncclGin_v11_t table{};

OneSided& S() {
  static OneSided state("ncclGinPlugin_v11", "gin");
  return state;
}

// An unknown device counts as maxRecvs 1: the smallest limit, which can
// only hide a refusal, never invent one.
int maxRecvsOf(void* listenComm) {
  const int dev = S().ledger().listenDev(listenComm);
  ncclNetProperties_v11_t props{};
  if (dev < 0 || inner->getProperties == nullptr ||
      inner->getProperties(dev, &props) != ncclSuccess) {
    return 1;
  }
  return props.maxRecvs;
}

ncclResult_t init(void** ctx, uint64_t commId, ncclDebugLogger_t logFn) {
  ncclResult_t res = S().start(logFn, inner->name, {});
  if (res != ncclSuccess) return res;
  res = inner->init(ctx, commId, logFn);
  S().trace().line("gin.init rc=%d", static_cast<int>(res));
  return res;
}

ncclResult_t devices(int* ndev) {
  return inner->devices(ndev);
}

ncclResult_t getProperties(int dev, ncclNetProperties_v11_t* props) {
  ncclResult_t res = inner->getProperties(dev, props);
  if (res == ncclSuccess && props != nullptr) {
    S().ledger().checkProperties(dev, props->netDeviceType, props->maxRecvs, props->ptrSupport,
                                 /*deviceCodeTypes=*/true);
  }
  return res;
}

ncclResult_t listen(void* ctx, int dev, void* handle, void** listenComm) {
  ncclResult_t res = inner->listen(ctx, dev, handle, listenComm);
  if (res == ncclSuccess && listenComm != nullptr && *listenComm != nullptr) {
    S().ledger().addListen(*listenComm, dev);
  }
  return res;
}

ncclResult_t connect(void* ctx, void* handles[], int nranks, int rank, void* listenComm,
                     void** collComm) {
  ncclResult_t res = inner->connect(ctx, handles, nranks, rank, listenComm, collComm);
  S().connected(collComm ? *collComm : nullptr, listenComm, nranks, rank, maxRecvsOf(listenComm),
                res);
  return res;
}

ncclResult_t createContext(void* collComm, int nSignals, int nCounters, void** ginCtx,
                           ncclNetDeviceHandle_v11_t** devHandle) {
  return inner->createContext(collComm, nSignals, nCounters, ginCtx, devHandle);
}

ncclResult_t regMrSym(void* collComm, void* data, size_t size, int type, uint64_t mrFlags,
                      void** mhandle, void** ginHandle) {
  ncclResult_t res = inner->regMrSym(collComm, data, size, type, mrFlags, mhandle, ginHandle);
  S().registered(collComm, mhandle ? *mhandle : nullptr, size, type, mrFlags, "regMrSym", res);
  return res;
}

ncclResult_t regMrSymDmaBuf(void* collComm, void* data, size_t size, int type, uint64_t offset,
                            int fd, uint64_t mrFlags, void** mhandle, void** ginHandle) {
  ncclResult_t res =
      inner->regMrSymDmaBuf(collComm, data, size, type, offset, fd, mrFlags, mhandle, ginHandle);
  S().registered(collComm, mhandle ? *mhandle : nullptr, size, type, mrFlags, "regMrSymDmaBuf",
                 res);
  return res;
}

ncclResult_t deregMrSym(void* collComm, void* mhandle) {
  ncclResult_t res = inner->deregMrSym(collComm, mhandle);
  S().deregistered(collComm, mhandle, res);
  return res;
}

ncclResult_t destroyContext(void* ginCtx) {
  return inner->destroyContext(ginCtx);
}

ncclResult_t closeColl(void* collComm) {
  uint64_t collId = S().closing(collComm);
  ncclResult_t res = inner->closeColl(collComm);
  S().closed(collId, res);
  return res;
}

ncclResult_t closeListen(void* listenComm) {
  S().ledger().closeListen(listenComm);
  return inner->closeListen(listenComm);
}

ncclResult_t iput(void* collComm, uint64_t srcOff, void* srcMhandle, size_t size, uint64_t dstOff,
                  void* dstMhandle, uint32_t rank, void** request) {
  RmaLedger::Post post = S().ledger().beforeOp(collComm, 0, rank, {srcMhandle, dstMhandle});
  ncclResult_t res =
      inner->iput(collComm, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, request);
  if (request != nullptr) S().ledger().afterOp(post, RmaOp::Put, res, *request);
  return res;
}

ncclResult_t iputSignal(void* collComm, uint64_t srcOff, void* srcMhandle, size_t size,
                        uint64_t dstOff, void* dstMhandle, uint32_t rank, uint64_t signalOff,
                        void* signalMhandle, uint64_t signalValue, uint32_t signalOp,
                        void** request) {
  // A signal without a payload may pass NULL payload handles (size 0).
  RmaLedger::Post post =
      size == 0 ? S().ledger().beforeOp(collComm, 0, rank, {signalMhandle})
                : S().ledger().beforeOp(collComm, 0, rank, {srcMhandle, dstMhandle, signalMhandle});
  ncclResult_t res = inner->iputSignal(collComm, srcOff, srcMhandle, size, dstOff, dstMhandle, rank,
                                       signalOff, signalMhandle, signalValue, signalOp, request);
  if (request != nullptr) S().ledger().afterOp(post, RmaOp::PutSignal, res, *request);
  return res;
}

ncclResult_t test(void* collComm, void* request, int* done) {
  ncclResult_t res = inner->test(collComm, request, done);
  S().ledger().afterTest(request, res, done != nullptr ? *done : 0);
  return res;
}

ncclResult_t ginProgress(void* collComm) {
  return inner->ginProgress(collComm);
}

ncclResult_t queryLastError(void* ginCtx, bool* hasError) {
  return inner->queryLastError(ginCtx, hasError);
}

ncclResult_t finalize(void* ctx) {
  ncclResult_t res = inner->finalize(ctx);
  S().trace().line("%s.finalize rc=%d", S().prefix(), static_cast<int>(res));
  S().trace().flush();  // as the net table's finalize does
  return res;
}

}  // namespace

void* fillGinV11Table(const void* innerTable) {
  inner = static_cast<const ncclGin_v11_t*>(innerTable);
  table.name = inner->name;
  // Same NULL members as the wrapped plugin's.
#define NCCLNET_CHECK_SLOT(m) table.m = inner->m != nullptr ? m : nullptr;
  NCCLNET_CHECK_SLOT(init)
  NCCLNET_CHECK_SLOT(devices)
  NCCLNET_CHECK_SLOT(getProperties)
  NCCLNET_CHECK_SLOT(listen)
  NCCLNET_CHECK_SLOT(connect)
  NCCLNET_CHECK_SLOT(createContext)
  NCCLNET_CHECK_SLOT(regMrSym)
  NCCLNET_CHECK_SLOT(regMrSymDmaBuf)
  NCCLNET_CHECK_SLOT(deregMrSym)
  NCCLNET_CHECK_SLOT(destroyContext)
  NCCLNET_CHECK_SLOT(closeColl)
  NCCLNET_CHECK_SLOT(closeListen)
  NCCLNET_CHECK_SLOT(iput)
  NCCLNET_CHECK_SLOT(iputSignal)
  NCCLNET_CHECK_SLOT(test)
  NCCLNET_CHECK_SLOT(ginProgress)
  NCCLNET_CHECK_SLOT(queryLastError)
  NCCLNET_CHECK_SLOT(finalize)
#undef NCCLNET_CHECK_SLOT
  return &table;
}

}  // namespace ncclnet::check
