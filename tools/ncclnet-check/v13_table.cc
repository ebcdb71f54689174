// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the checker's ncclRmaPlugin_v13 and ncclGinPlugin_v13 over
// the wrapped plugin's (one_sided.hpp): one layout under two names. NCCL
// 2.30.7 takes ncclRmaPlugin_v13, or else ncclGinPlugin_v13, as its RMA
// table when there is no v14 (src/plugin/rma/rma_v13.cc getNcclRma_v13),
// and NCCL 2.30.3 and 2.30.4 drive ncclGinPlugin_v13 through their GIN
// proxy. Operations name a context created on the collComm, as in RMA v14.
//
// Members are judged for ncclRmaPlugin_v13 only (rma_v13.cc copies them
// into the RMA table NCCL calls without a NULL check); which members NCCL
// calls of a GIN table depends on its device type.
#include <vector>

#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/rma.h"
#include "one_sided.hpp"

namespace ncclnet::check {

namespace {

// One instance per symbol: kRma is ncclRmaPlugin_v13, the other
// ncclGinPlugin_v13.
template <bool kRma>
struct V13 {
  static inline const ncclGin_v13_t* inner = nullptr;
  static inline ncclGin_v13_t table{};

  static OneSided& S() {
    static OneSided state(kRma ? "ncclRmaPlugin_v13" : "ncclGinPlugin_v13",
                          kRma ? "rma13" : "gin13");
    return state;
  }

  // An unknown device counts as maxRecvs 1: the smallest limit, which can
  // only hide a refusal, never invent one.
  static int maxRecvsOf(void* listenComm) {
    const int dev = S().ledger().listenDev(listenComm);
    ncclNetProperties_v12_t props{};
    if (dev < 0 || inner->getProperties == nullptr ||
        inner->getProperties(dev, &props) != ncclSuccess) {
      return 1;
    }
    return props.maxRecvs;
  }

  static ncclResult_t init(void** ctx, uint64_t commId, ncclDebugLogger_t logFn) {
    std::vector<const char*> missing;
    if (kRma) {
#define NCCLNET_CHECK_MEMBER(m) \
  if (inner->m == nullptr) missing.push_back(#m);
      NCCLNET_CHECK_MEMBER(init)
      NCCLNET_CHECK_MEMBER(devices)
      NCCLNET_CHECK_MEMBER(getProperties)
      NCCLNET_CHECK_MEMBER(listen)
      NCCLNET_CHECK_MEMBER(connect)
      NCCLNET_CHECK_MEMBER(createContext)
      NCCLNET_CHECK_MEMBER(regMrSym)
      NCCLNET_CHECK_MEMBER(deregMrSym)
      NCCLNET_CHECK_MEMBER(destroyContext)
      NCCLNET_CHECK_MEMBER(closeColl)
      NCCLNET_CHECK_MEMBER(closeListen)
      NCCLNET_CHECK_MEMBER(iput)
      NCCLNET_CHECK_MEMBER(iputSignal)
      NCCLNET_CHECK_MEMBER(iget)
      NCCLNET_CHECK_MEMBER(iflush)
      NCCLNET_CHECK_MEMBER(test)
      NCCLNET_CHECK_MEMBER(finalize)
#undef NCCLNET_CHECK_MEMBER
    }
    ncclResult_t res = S().start(logFn, inner->name, missing);
    if (res != ncclSuccess) return res;
    res = inner->init(ctx, commId, logFn);
    S().trace().line("%s.init rc=%d", S().prefix(), static_cast<int>(res));
    return res;
  }

  static ncclResult_t devices(int* ndev) {
    return inner->devices(ndev);
  }

  static ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    ncclResult_t res = inner->getProperties(dev, props);
    if (res == ncclSuccess && props != nullptr) {
      S().ledger().checkProperties(dev, props->netDeviceType, props->maxRecvs, props->ptrSupport,
                                   /*deviceCodeTypes=*/!kRma);
    }
    return res;
  }

  static ncclResult_t listen(void* ctx, int dev, void* handle, void** listenComm) {
    ncclResult_t res = inner->listen(ctx, dev, handle, listenComm);
    if (res == ncclSuccess && listenComm != nullptr && *listenComm != nullptr) {
      S().ledger().addListen(*listenComm, dev);
    }
    return res;
  }

  static ncclResult_t connect(void* ctx, void* handles[], int nranks, int rank, void* listenComm,
                              void** collComm) {
    ncclResult_t res = inner->connect(ctx, handles, nranks, rank, listenComm, collComm);
    S().connected(collComm ? *collComm : nullptr, listenComm, nranks, rank, maxRecvsOf(listenComm),
                  res);
    return res;
  }

  static ncclResult_t createContext(void* collComm, ncclGinConfig_v13_t* config, void** ginCtx,
                                    ncclNetDeviceHandle_v11_t** devHandle) {
    ncclResult_t res = inner->createContext(collComm, config, ginCtx, devHandle);
    if (res == ncclSuccess && ginCtx != nullptr) S().ledger().addContext(*ginCtx, collComm);
    return res;
  }

  static ncclResult_t regMrSym(void* collComm, void* data, size_t size, int type, uint64_t mrFlags,
                               void** mhandle, void** ginHandle) {
    ncclResult_t res = inner->regMrSym(collComm, data, size, type, mrFlags, mhandle, ginHandle);
    S().registered(collComm, mhandle ? *mhandle : nullptr, size, type, mrFlags, "regMrSym", res);
    return res;
  }

  static ncclResult_t regMrSymDmaBuf(void* collComm, void* data, size_t size, int type,
                                     uint64_t offset, int fd, uint64_t mrFlags, void** mhandle,
                                     void** ginHandle) {
    ncclResult_t res =
        inner->regMrSymDmaBuf(collComm, data, size, type, offset, fd, mrFlags, mhandle, ginHandle);
    S().registered(collComm, mhandle ? *mhandle : nullptr, size, type, mrFlags, "regMrSymDmaBuf",
                   res);
    return res;
  }

  static ncclResult_t deregMrSym(void* collComm, void* mhandle) {
    ncclResult_t res = inner->deregMrSym(collComm, mhandle);
    S().deregistered(collComm, mhandle, res);
    return res;
  }

  static ncclResult_t destroyContext(void* ginCtx) {
    S().ledger().dropContext(ginCtx);
    return inner->destroyContext(ginCtx);
  }

  static ncclResult_t closeColl(void* collComm) {
    uint64_t collId = S().closing(collComm);
    ncclResult_t res = inner->closeColl(collComm);
    S().closed(collId, res);
    return res;
  }

  static ncclResult_t closeListen(void* listenComm) {
    S().ledger().closeListen(listenComm);
    return inner->closeListen(listenComm);
  }

  static ncclResult_t iput(void* ginCtx, int context, uint64_t srcOff, void* srcMhandle,
                           size_t size, uint64_t dstOff, void* dstMhandle, uint32_t rank,
                           void** request) {
    RmaLedger::Post post = S().ledger().beforeOp(ginCtx, context, rank, {srcMhandle, dstMhandle});
    ncclResult_t res =
        inner->iput(ginCtx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, request);
    if (request != nullptr) S().ledger().afterOp(post, RmaOp::Put, res, *request);
    return res;
  }

  static ncclResult_t iputSignal(void* ginCtx, int context, uint64_t srcOff, void* srcMhandle,
                                 size_t size, uint64_t dstOff, void* dstMhandle, uint32_t rank,
                                 uint64_t signalOff, void* signalMhandle, uint64_t signalValue,
                                 uint32_t signalOp, void** request) {
    // A signal without a payload may pass NULL payload handles (size 0).
    RmaLedger::Post post =
        size == 0
            ? S().ledger().beforeOp(ginCtx, context, rank, {signalMhandle})
            : S().ledger().beforeOp(ginCtx, context, rank, {srcMhandle, dstMhandle, signalMhandle});
    ncclResult_t res =
        inner->iputSignal(ginCtx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank,
                          signalOff, signalMhandle, signalValue, signalOp, request);
    if (request != nullptr) S().ledger().afterOp(post, RmaOp::PutSignal, res, *request);
    return res;
  }

  static ncclResult_t iget(void* ginCtx, int context, uint64_t remoteOff, void* remoteMhandle,
                           size_t size, uint64_t localOff, void* localMhandle, uint32_t rank,
                           void** request) {
    RmaLedger::Post post =
        S().ledger().beforeOp(ginCtx, context, rank, {remoteMhandle, localMhandle});
    ncclResult_t res = inner->iget(ginCtx, context, remoteOff, remoteMhandle, size, localOff,
                                   localMhandle, rank, request);
    if (request != nullptr) S().ledger().afterOp(post, RmaOp::Get, res, *request);
    return res;
  }

  // A NULL flush request means nothing to wait for (rule 75): not judged.
  static ncclResult_t iflush(void* ginCtx, int context, void* mhandle, uint32_t rank,
                             void** request) {
    return inner->iflush(ginCtx, context, mhandle, rank, request);
  }

  static ncclResult_t test(void* collComm, void* request, int* done) {
    ncclResult_t res = inner->test(collComm, request, done);
    S().ledger().afterTest(request, res, done != nullptr ? *done : 0);
    return res;
  }

  static ncclResult_t ginProgress(void* ginCtx) {
    return inner->ginProgress(ginCtx);
  }

  static ncclResult_t queryLastError(void* ginCtx, bool* hasError) {
    return inner->queryLastError(ginCtx, hasError);
  }

  static ncclResult_t finalize(void* ctx) {
    ncclResult_t res = inner->finalize(ctx);
    S().trace().line("%s.finalize rc=%d", S().prefix(), static_cast<int>(res));
    S().trace().flush();  // as the net table's finalize does
    return res;
  }

  static void* fill(const void* innerTable) {
    inner = static_cast<const ncclGin_v13_t*>(innerTable);
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
    NCCLNET_CHECK_SLOT(iget)
    NCCLNET_CHECK_SLOT(iflush)
    NCCLNET_CHECK_SLOT(test)
    NCCLNET_CHECK_SLOT(ginProgress)
    NCCLNET_CHECK_SLOT(queryLastError)
    NCCLNET_CHECK_SLOT(finalize)
#undef NCCLNET_CHECK_SLOT
    return &table;
  }
};

}  // namespace

void* fillRmaV13Table(const void* inner) {
  return V13<true>::fill(inner);
}

void* fillGinV13Table(const void* inner) {
  return V13<false>::fill(inner);
}

}  // namespace ncclnet::check
