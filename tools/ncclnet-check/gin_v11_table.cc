// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the checker's ncclGinPlugin_v11 over the wrapped plugin's
// (one_sided.hpp): what NCCL 2.28 loads from the net plugin's library. Its
// proxy (src/gin/gin_host_proxy.cc) posts iput and iputSignal on the
// collComm itself, one queue of 32 x maxRecvs slots per peer, and tests
// each slot's request until done.
#include "ncclnet/abi/gin.h"
#include "one_sided_table.hpp"

namespace ncclnet::check {

namespace {

struct GinV11 {
  using Table = ncclGin_v11_t;
  using Properties = ncclNetProperties_v11_t;
  static constexpr const char* kSymbol = "ncclGinPlugin_v11";
  static constexpr const char* kPrefix = "gin";
  static constexpr bool kDeviceCodeTypes = true;
  // Which members NCCL calls depends on the device type (the proxy never
  // calls createContext, GDAKI never iput), so the table's members are not
  // judged here; the RMA v14 table's are.
  static std::vector<const char*> missing(const Table&) { return {}; }
};
using T = OneSidedTable<GinV11>;

ncclResult_t createContext(void* collComm, int nSignals, int nCounters, void** ginCtx,
                           ncclNetDeviceHandle_v11_t** devHandle) {
  return T::inner->createContext(collComm, nSignals, nCounters, ginCtx, devHandle);
}

ncclResult_t destroyContext(void* ginCtx) {
  return T::inner->destroyContext(ginCtx);
}

ncclResult_t iput(void* collComm, uint64_t srcOff, void* srcMhandle, size_t size, uint64_t dstOff,
                  void* dstMhandle, uint32_t rank, void** request) {
  RmaLedger::Post post = T::S().ledger().beforeOp(collComm, 0, rank, {srcMhandle, dstMhandle});
  ncclResult_t res =
      T::inner->iput(collComm, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, request);
  if (request != nullptr) T::S().ledger().afterOp(post, RmaOp::Put, res, *request);
  return res;
}

ncclResult_t iputSignal(void* collComm, uint64_t srcOff, void* srcMhandle, size_t size,
                        uint64_t dstOff, void* dstMhandle, uint32_t rank, uint64_t signalOff,
                        void* signalMhandle, uint64_t signalValue, uint32_t signalOp,
                        void** request) {
  RmaLedger::Post post =
      T::S().beforeSignal(collComm, 0, rank, size, srcMhandle, dstMhandle, signalMhandle);
  ncclResult_t res =
      T::inner->iputSignal(collComm, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, signalOff,
                           signalMhandle, signalValue, signalOp, request);
  if (request != nullptr) T::S().ledger().afterOp(post, RmaOp::PutSignal, res, *request);
  return res;
}

ncclResult_t ginProgress(void* collComm) {
  return T::inner->ginProgress(collComm);
}

}  // namespace

void* fillGinV11Table(const void* inner) {
  T::fill(inner);
  T::slot(&ncclGin_v11_t::createContext, createContext);
  T::slot(&ncclGin_v11_t::destroyContext, destroyContext);
  T::slot(&ncclGin_v11_t::iput, iput);
  T::slot(&ncclGin_v11_t::iputSignal, iputSignal);
  T::slot(&ncclGin_v11_t::ginProgress, ginProgress);
  return &T::table;
}

}  // namespace ncclnet::check
