// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the checker's ncclRmaPlugin_v14 over the wrapped plugin's
// (one_sided.hpp). NCCL 2.30.7+ uses the table as it is, with no adapter
// (src/plugin/rma/rma_v14.cc getNcclRma_v14), and calls every member but
// rmaProgress, queryLastError and regMrSymDmaBuf without a NULL check
// (src/rma/rma_proxy.cc, rma_proxy_progress.cc).
#include <vector>

#include "ncclnet/abi/rma.h"
#include "one_sided.hpp"

namespace ncclnet::check {

namespace {

const ncclRma_v14_t* inner = nullptr;
ncclRma_v14_t table{};

OneSided& S() {
  static OneSided state("ncclRmaPlugin_v14", "rma");
  return state;
}

int maxRecvsOf(void* listenComm);

ncclResult_t init(void** ctx, uint64_t commId, ncclDebugLogger_t logFn) {
  std::vector<const char*> missing;
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
  ncclResult_t res = S().start(logFn, inner->name, missing);
  if (res != ncclSuccess) return res;
  res = inner->init(ctx, commId, logFn);
  S().trace().line("rma.init rc=%d", static_cast<int>(res));
  return res;
}

ncclResult_t devices(int* ndev) {
  return inner->devices(ndev);
}

ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclResult_t res = inner->getProperties(dev, props);
  if (res == ncclSuccess && props != nullptr) {
    S().ledger().checkProperties(dev, props->netDeviceType, props->maxRecvs, props->ptrSupport,
                                 /*deviceCodeTypes=*/false);
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

ncclResult_t createContext(void* collComm, ncclRmaConfig_v14_t* config, void** rmaCtx) {
  ncclResult_t res = inner->createContext(collComm, config, rmaCtx);
  if (res == ncclSuccess && rmaCtx != nullptr) S().ledger().addContext(*rmaCtx, collComm);
  return res;
}

ncclResult_t regMrSym(void* collComm, void* data, size_t size, int type, uint64_t mrFlags,
                      void** mhandle) {
  ncclResult_t res = inner->regMrSym(collComm, data, size, type, mrFlags, mhandle);
  S().registered(collComm, mhandle ? *mhandle : nullptr, size, type, mrFlags, "regMrSym", res);
  return res;
}

ncclResult_t regMrSymDmaBuf(void* collComm, void* data, size_t size, int type, uint64_t offset,
                            int fd, uint64_t mrFlags, void** mhandle) {
  ncclResult_t res =
      inner->regMrSymDmaBuf(collComm, data, size, type, offset, fd, mrFlags, mhandle);
  S().registered(collComm, mhandle ? *mhandle : nullptr, size, type, mrFlags, "regMrSymDmaBuf",
                 res);
  return res;
}

ncclResult_t deregMrSym(void* collComm, void* mhandle) {
  ncclResult_t res = inner->deregMrSym(collComm, mhandle);
  S().deregistered(collComm, mhandle, res);
  return res;
}

ncclResult_t destroyContext(void* rmaCtx) {
  S().ledger().dropContext(rmaCtx);
  return inner->destroyContext(rmaCtx);
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

ncclResult_t iput(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size,
                  uint64_t dstOff, void* dstMhandle, uint32_t rank, void** request) {
  RmaLedger::Post post = S().ledger().beforeOp(rmaCtx, context, rank, {srcMhandle, dstMhandle});
  ncclResult_t res =
      inner->iput(rmaCtx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, request);
  if (request != nullptr) S().ledger().afterOp(post, RmaOp::Put, res, *request);
  return res;
}

ncclResult_t iputSignal(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size,
                        uint64_t dstOff, void* dstMhandle, uint32_t rank, uint64_t signalOff,
                        void* signalMhandle, uint64_t signalValue, uint32_t signalOp,
                        bool isStrongSignal, void** request) {
  // A signal without a payload passes NULL source and destination handles
  // (size 0): only the signal's registration is then judged.
  RmaLedger::Post post = size == 0 ? S().ledger().beforeOp(rmaCtx, context, rank, {signalMhandle})
                                   : S().ledger().beforeOp(rmaCtx, context, rank,
                                                           {srcMhandle, dstMhandle, signalMhandle});
  ncclResult_t res =
      inner->iputSignal(rmaCtx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank,
                        signalOff, signalMhandle, signalValue, signalOp, isStrongSignal, request);
  if (request != nullptr) S().ledger().afterOp(post, RmaOp::PutSignal, res, *request);
  return res;
}

ncclResult_t iget(void* rmaCtx, int context, uint64_t remoteOff, void* remoteMhandle, size_t size,
                  uint64_t localOff, void* localMhandle, uint32_t rank, void** request) {
  RmaLedger::Post post =
      S().ledger().beforeOp(rmaCtx, context, rank, {remoteMhandle, localMhandle});
  ncclResult_t res = inner->iget(rmaCtx, context, remoteOff, remoteMhandle, size, localOff,
                                 localMhandle, rank, request);
  if (request != nullptr) S().ledger().afterOp(post, RmaOp::Get, res, *request);
  return res;
}

// A NULL flush request means nothing to wait for (rule 75): not judged.
ncclResult_t iflush(void* rmaCtx, int context, void* mhandle, uint32_t rank, void** request) {
  return inner->iflush(rmaCtx, context, mhandle, rank, request);
}

ncclResult_t test(void* collComm, void* request, int* done) {
  ncclResult_t res = inner->test(collComm, request, done);
  S().ledger().afterTest(request, res, done != nullptr ? *done : 0);
  return res;
}

ncclResult_t rmaProgress(void* rmaCtx) {
  return inner->rmaProgress(rmaCtx);
}

ncclResult_t queryLastError(void* rmaCtx, bool* hasError) {
  return inner->queryLastError(rmaCtx, hasError);
}

ncclResult_t finalize(void* ctx) {
  ncclResult_t res = inner->finalize(ctx);
  S().trace().line("%s.finalize rc=%d", S().prefix(), static_cast<int>(res));
  S().trace().flush();  // as the net table's finalize does
  return res;
}

// The requests NCCL may keep outstanding per peer: 32 x maxRecvs of the
// listen's device (src/rma/rma_proxy.cc sizes its queue so).
// An unknown device counts as maxRecvs 1: the smallest limit, which can
// only hide a refusal, never invent one.
int maxRecvsOf(void* listenComm) {
  const int dev = S().ledger().listenDev(listenComm);
  ncclNetProperties_v12_t props{};
  if (dev < 0 || inner->getProperties == nullptr ||
      inner->getProperties(dev, &props) != ncclSuccess) {
    return 1;
  }
  return props.maxRecvs;
}

}  // namespace

void* fillRmaV14Table(const void* innerTable) {
  inner = static_cast<const ncclRma_v14_t*>(innerTable);
  table.name = inner->name;
  // Same NULL members as the wrapped plugin's: NCCL tests the optional ones.
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
  NCCLNET_CHECK_SLOT(rmaProgress)
  NCCLNET_CHECK_SLOT(queryLastError)
  NCCLNET_CHECK_SLOT(finalize)
#undef NCCLNET_CHECK_SLOT
  return &table;
}

}  // namespace ncclnet::check
