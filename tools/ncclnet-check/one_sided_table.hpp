// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the wrappers the checker's one-sided tables (one_sided.hpp)
// share, written once over the table's struct. Each table's file describes
// its table in a traits struct and wraps the members only it has:
//   Table, Properties   the ABI struct and its getProperties' properties;
//   kSymbol, kPrefix    the symbol and the prefix of its trace lines;
//   kDeviceCodeTypes    whether a device may have a type NCCL has device
//                       code for (RmaLedger::checkProperties);
//   missing(table)      the members NCCL calls without a NULL check that
//                       `table` leaves NULL (rule 70).
#pragma once

#include <vector>

#include "one_sided.hpp"

namespace ncclnet::check {

// `missing` of a table NCCL uses as its RMA table: NCCL 2.30.7+ calls every
// member but rmaProgress, queryLastError and regMrSymDmaBuf without a NULL
// check (src/rma/rma_proxy.cc, rma_proxy_progress.cc).
template <class Table>
std::vector<const char*> missingRmaMembers(const Table& table) {
  std::vector<const char*> missing;
#define NCCLNET_CHECK_MEMBER(m) \
  if (table.m == nullptr) missing.push_back(#m);
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
  return missing;
}

template <class Traits>
struct OneSidedTable {
  using Table = typename Traits::Table;
  using Properties = typename Traits::Properties;

  static inline const Table* inner = nullptr;
  static inline Table table{};

  static OneSided& S() {
    static OneSided state(Traits::kSymbol, Traits::kPrefix);
    return state;
  }

  // The checker's member where the wrapped plugin has one, NULL where it
  // has none: NCCL tests the optional ones.
  template <class F>
  static void slot(F Table::*member, F wrapper) {
    table.*member = inner->*member != nullptr ? wrapper : nullptr;
  }

  // The members of every version's table; each file's fill adds its own.
  static void fill(const void* innerTable) {
    inner = static_cast<const Table*>(innerTable);
    table.name = inner->name;
    slot(&Table::init, init);
    slot(&Table::devices, devices);
    slot(&Table::getProperties, getProperties);
    slot(&Table::listen, listen);
    slot(&Table::connect, connect);
    slot(&Table::regMrSym, regMrSym);
    slot(&Table::regMrSymDmaBuf, regMrSymDmaBuf);
    slot(&Table::deregMrSym, deregMrSym);
    slot(&Table::closeColl, closeColl);
    slot(&Table::closeListen, closeListen);
    slot(&Table::test, test);
    slot(&Table::queryLastError, queryLastError);
    slot(&Table::finalize, finalize);
  }

  // The requests NCCL may keep outstanding per peer: 32 x maxRecvs of the
  // listen's device (src/rma/rma_proxy.cc, and 2.28's GIN proxy, size their
  // queues so).
  // An unknown device counts as maxRecvs 1: the smallest limit, which can
  // only hide a refusal, never invent one.
  static int maxRecvsOf(void* listenComm) {
    const int dev = S().ledger().listenDev(listenComm);
    Properties props{};
    if (dev < 0 || inner->getProperties == nullptr ||
        inner->getProperties(dev, &props) != ncclSuccess) {
      return 1;
    }
    return props.maxRecvs;
  }

  static ncclResult_t init(void** ctx, uint64_t commId, ncclDebugLogger_t logFn) {
    ncclResult_t res = S().start(logFn, inner->name, Traits::missing(*inner));
    if (res != ncclSuccess) return res;
    res = inner->init(ctx, commId, logFn);
    S().trace().line("%s.init rc=%d", S().prefix(), static_cast<int>(res));
    return res;
  }

  static ncclResult_t devices(int* ndev) { return inner->devices(ndev); }

  static ncclResult_t getProperties(int dev, Properties* props) {
    ncclResult_t res = inner->getProperties(dev, props);
    if (res == ncclSuccess && props != nullptr) {
      S().ledger().checkProperties(dev, props->netDeviceType, props->maxRecvs, props->ptrSupport,
                                   Traits::kDeviceCodeTypes);
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

  // `ginHandle`: the GIN layouts' one more out-parameter (none in RMA v14).
  template <class... GinHandle>
  static ncclResult_t regMrSym(void* collComm, void* data, size_t size, int type, uint64_t mrFlags,
                               void** mhandle, GinHandle... ginHandle) {
    ncclResult_t res = inner->regMrSym(collComm, data, size, type, mrFlags, mhandle, ginHandle...);
    S().registered(collComm, mhandle ? *mhandle : nullptr, size, type, mrFlags, "regMrSym", res);
    return res;
  }

  template <class... GinHandle>
  static ncclResult_t regMrSymDmaBuf(void* collComm, void* data, size_t size, int type,
                                     uint64_t offset, int fd, uint64_t mrFlags, void** mhandle,
                                     GinHandle... ginHandle) {
    ncclResult_t res = inner->regMrSymDmaBuf(collComm, data, size, type, offset, fd, mrFlags,
                                             mhandle, ginHandle...);
    S().registered(collComm, mhandle ? *mhandle : nullptr, size, type, mrFlags, "regMrSymDmaBuf",
                   res);
    return res;
  }

  static ncclResult_t deregMrSym(void* collComm, void* mhandle) {
    ncclResult_t res = inner->deregMrSym(collComm, mhandle);
    S().deregistered(collComm, mhandle, res);
    return res;
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

  static ncclResult_t test(void* collComm, void* request, int* done) {
    ncclResult_t res = inner->test(collComm, request, done);
    S().ledger().afterTest(request, res, done != nullptr ? *done : 0);
    return res;
  }

  static ncclResult_t queryLastError(void* ctx, bool* hasError) {
    return inner->queryLastError(ctx, hasError);
  }

  static ncclResult_t finalize(void* ctx) {
    ncclResult_t res = inner->finalize(ctx);
    S().trace().line("%s.finalize rc=%d", S().prefix(), static_cast<int>(res));
    S().trace().flush();  // as the net table's finalize does
    return res;
  }

  // ---- the tables whose operations name a context (RMA v14, v13) ----

  static void fillContextOps() {
    slot(&Table::createContext, createContext);
    slot(&Table::destroyContext, destroyContext);
    slot(&Table::iput, iput);
    slot(&Table::iget, iget);
    slot(&Table::iflush, iflush);
  }

  // `devHandle`: v13's one more out-parameter.
  template <class Config, class... DevHandle>
  static ncclResult_t createContext(void* collComm, Config* config, void** ctx,
                                    DevHandle... devHandle) {
    ncclResult_t res = inner->createContext(collComm, config, ctx, devHandle...);
    if (res == ncclSuccess && ctx != nullptr) S().ledger().addContext(*ctx, collComm);
    return res;
  }

  static ncclResult_t destroyContext(void* ctx) {
    S().ledger().dropContext(ctx);
    return inner->destroyContext(ctx);
  }

  static ncclResult_t iput(void* ctx, int context, uint64_t srcOff, void* srcMhandle, size_t size,
                           uint64_t dstOff, void* dstMhandle, uint32_t rank, void** request) {
    RmaLedger::Post post = S().ledger().beforeOp(ctx, context, rank, {srcMhandle, dstMhandle});
    ncclResult_t res =
        inner->iput(ctx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, request);
    if (request != nullptr) S().ledger().afterOp(post, RmaOp::Put, res, *request);
    return res;
  }

  static ncclResult_t iget(void* ctx, int context, uint64_t remoteOff, void* remoteMhandle,
                           size_t size, uint64_t localOff, void* localMhandle, uint32_t rank,
                           void** request) {
    RmaLedger::Post post = S().ledger().beforeOp(ctx, context, rank, {remoteMhandle, localMhandle});
    ncclResult_t res = inner->iget(ctx, context, remoteOff, remoteMhandle, size, localOff,
                                   localMhandle, rank, request);
    if (request != nullptr) S().ledger().afterOp(post, RmaOp::Get, res, *request);
    return res;
  }

  // A NULL flush request means nothing to wait for (rule 75): not judged.
  static ncclResult_t iflush(void* ctx, int context, void* mhandle, uint32_t rank, void** request) {
    return inner->iflush(ctx, context, mhandle, rank, request);
  }
};

}  // namespace ncclnet::check
