// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the checker's ncclRmaPlugin_v13 and ncclGinPlugin_v13 over
// the wrapped plugin's (one_sided.hpp): one layout under two names. NCCL
// 2.30.7 takes ncclRmaPlugin_v13, or else ncclGinPlugin_v13, as its RMA
// table when there is no v14 (src/plugin/rma/rma_v13.cc getNcclRma_v13),
// and NCCL 2.30.3 and 2.30.4 drive ncclGinPlugin_v13 through their GIN
// proxy. Operations name a context created on the collComm, as in RMA v14.
#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/rma.h"
#include "one_sided_table.hpp"

namespace ncclnet::check {

namespace {

// kRma: ncclRmaPlugin_v13, else ncclGinPlugin_v13.
template <bool kRma>
struct V13 {
  using Table = ncclGin_v13_t;
  using Properties = ncclNetProperties_v12_t;
  static constexpr const char* kSymbol = kRma ? "ncclRmaPlugin_v13" : "ncclGinPlugin_v13";
  static constexpr const char* kPrefix = kRma ? "rma13" : "gin13";
  static constexpr bool kDeviceCodeTypes = !kRma;
  // Members are judged for ncclRmaPlugin_v13 only (rma_v13.cc copies them
  // into the RMA table NCCL calls without a NULL check); which members NCCL
  // calls of a GIN table depends on its device type.
  static std::vector<const char*> missing(const Table& t) {
    return kRma ? missingRmaMembers(t) : std::vector<const char*>{};
  }
};

template <bool kRma>
ncclResult_t iputSignal(void* ginCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size,
                        uint64_t dstOff, void* dstMhandle, uint32_t rank, uint64_t signalOff,
                        void* signalMhandle, uint64_t signalValue, uint32_t signalOp,
                        void** request) {
  using T = OneSidedTable<V13<kRma>>;
  RmaLedger::Post post =
      T::S().beforeSignal(ginCtx, context, rank, size, srcMhandle, dstMhandle, signalMhandle);
  ncclResult_t res =
      T::inner->iputSignal(ginCtx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank,
                           signalOff, signalMhandle, signalValue, signalOp, request);
  if (request != nullptr) T::S().ledger().afterOp(post, RmaOp::PutSignal, res, *request);
  return res;
}

template <bool kRma>
ncclResult_t ginProgress(void* ginCtx) {
  return OneSidedTable<V13<kRma>>::inner->ginProgress(ginCtx);
}

template <bool kRma>
void* fill(const void* inner) {
  using T = OneSidedTable<V13<kRma>>;
  T::fill(inner);
  T::fillContextOps();
  T::slot(&ncclGin_v13_t::iputSignal, iputSignal<kRma>);
  T::slot(&ncclGin_v13_t::ginProgress, ginProgress<kRma>);
  return &T::table;
}

}  // namespace

void* fillRmaV13Table(const void* inner) {
  return fill<true>(inner);
}

void* fillGinV13Table(const void* inner) {
  return fill<false>(inner);
}

}  // namespace ncclnet::check
