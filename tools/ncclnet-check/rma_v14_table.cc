// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the checker's ncclRmaPlugin_v14 over the wrapped plugin's
// (one_sided.hpp). NCCL 2.30.7+ uses the table as it is, with no adapter
// (src/plugin/rma/rma_v14.cc getNcclRma_v14), and calls every member but
// rmaProgress, queryLastError and regMrSymDmaBuf without a NULL check
// (src/rma/rma_proxy.cc, rma_proxy_progress.cc).
#include "ncclnet/abi/rma.h"
#include "one_sided_table.hpp"

namespace ncclnet::check {

namespace {

struct RmaV14 {
  using Table = ncclRma_v14_t;
  using Properties = ncclNetProperties_v12_t;
  static constexpr const char* kSymbol = "ncclRmaPlugin_v14";
  static constexpr const char* kPrefix = "rma";
  static constexpr bool kDeviceCodeTypes = false;
  static std::vector<const char*> missing(const Table& t) { return missingRmaMembers(t); }
};
using T = OneSidedTable<RmaV14>;

ncclResult_t iputSignal(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size,
                        uint64_t dstOff, void* dstMhandle, uint32_t rank, uint64_t signalOff,
                        void* signalMhandle, uint64_t signalValue, uint32_t signalOp,
                        bool isStrongSignal, void** request) {
  RmaLedger::Post post =
      T::S().beforeSignal(rmaCtx, context, rank, size, srcMhandle, dstMhandle, signalMhandle);
  ncclResult_t res = T::inner->iputSignal(rmaCtx, context, srcOff, srcMhandle, size, dstOff,
                                          dstMhandle, rank, signalOff, signalMhandle, signalValue,
                                          signalOp, isStrongSignal, request);
  if (request != nullptr) T::S().ledger().afterOp(post, RmaOp::PutSignal, res, *request);
  return res;
}

ncclResult_t rmaProgress(void* rmaCtx) {
  return T::inner->rmaProgress(rmaCtx);
}

}  // namespace

void* fillRmaV14Table(const void* inner) {
  T::fill(inner);
  T::fillContextOps();
  T::slot(&ncclRma_v14_t::iputSignal, iputSignal);
  T::slot(&ncclRma_v14_t::rmaProgress, rmaProgress);
  return &T::table;
}

}  // namespace ncclnet::check
