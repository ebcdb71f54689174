// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: one class for NCCL's host-side one-sided tables. Write the
// semantics of the newest RMA table (ncclRma_v14) once and export it with
//
//   NCCLNET_EXPORT_RMA_PLUGIN(MyRma)
//
// which defines ncclRmaPlugin_v13, _v14, _v15 and the proxy-type GIN
// tables ncclGinPlugin_v11, _v12 and _v13, so that NCCL 2.28.7 through 2.30
// drive the class through its GIN proxy and its host RMA API. Put it in the
// same library as the plugin's net table: 2.28 looks for GIN only there
// (plugin/net.cc). docs/gin-rma.md says which release takes which table.
//
//   class MyRma {
//    public:
//     static constexpr const char* kName = "my-rma";
//     static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<MyRma>* out);
//     ncclResult_t devices(int* ndev);
//     // `props` holds NCCL's defaults on entry; the SDK then sets
//     // netDeviceType to NCCL_NET_DEVICE_GIN_PROXY, which NCCL requires.
//     ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
//     ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle,
//                         void** listenComm);
//     // Collective and blocking: every rank calls it once with the
//     // all-gathered handles of all nranks ranks.
//     ncclResult_t connect(const ncclnet::CommContext& ctx, void* const* handles, int nranks,
//                          int rank, void* listenComm, void** collComm);
//     ncclResult_t createContext(void* collComm, const ncclnet::RmaConfig& config, void** rmaCtx);
//     // Collective: the same registrations in the same order on every rank,
//     // sizes may differ. Offsets in the data calls are relative to the
//     // target rank's registered base.
//     ncclResult_t regMrSym(void* collComm, void* data, size_t size, int type, uint64_t mrFlags,
//                           void** mhandle);
//     ncclResult_t deregMrSym(void* collComm, void* mhandle);
//     ncclResult_t destroyContext(void* rmaCtx);
//     ncclResult_t closeColl(void* collComm);
//     ncclResult_t closeListen(void* listenComm);
//     ncclResult_t iput(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size,
//                       uint64_t dstOff, void* dstMhandle, uint32_t rank, void** request);
//     ncclResult_t iputSignal(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle,
//                             size_t size, uint64_t dstOff, void* dstMhandle, uint32_t rank,
//                             const ncclnet::RmaSignal& signal, void** request);
//     ncclResult_t iget(void* rmaCtx, int context, uint64_t remoteOff, void* remoteMhandle,
//                       size_t size, uint64_t localOff, void* localMhandle, uint32_t rank,
//                       void** request);
//     // *request NULL on success: nothing to wait for.
//     ncclResult_t iflush(void* rmaCtx, int context, void* mhandle, uint32_t rank,
//                         void** request);
//     // done = local completion: the source may be reused.
//     ncclResult_t test(void* collComm, void* request, int* done);
//     ncclResult_t queryLastError(void* rmaCtx, bool* hasError);
//     // optional:
//     ncclResult_t regMrSymDmaBuf(void* collComm, void* data, size_t size, int type,
//                                 uint64_t offset, int fd, uint64_t mrFlags, void** mhandle);
//     // Called by NCCL's progress threads, even when idle; without it,
//     // test() alone must move every transfer.
//     ncclResult_t progress(void* rmaCtx);
//   };
//   NCCLNET_EXPORT_RMA_PLUGIN(MyRma)
//
// What the SDK does for every class alike (detail/rma_exports.hpp):
//  - one object per process, created at the first init and destroyed at the
//    last finalize, as for the net table (<ncclnet/plugin.hpp>); a NULL ctx
//    in listen or connect (NCCL 2.28 passes one for every communicator but
//    the first) means the process's own context;
//  - GIN v11 and v12 have no contexts: the SDK's comm wraps the class's
//    collComm and a context it creates at connect (one, or nConnections),
//    and hands the class that context and the connection index;
//  - GIN v11 to v13 return a ginHandle from regMrSym: the same pointer as
//    the mhandle, which NCCL passes for inline puts;
//  - a v13 signal, or any GIN signal, is strong; INC adds 1 whatever value
//    NCCL passed (RmaSignal::value already says 1);
//  - refuses a signal op other than INC or ADD, NULL outputs, and a data
//    call that returns success without a request (NCCL would test NULL),
//    each with one WARN line; an escaping exception becomes
//    ncclInternalError.
// Threads: NCCL's GIN and RMA progress threads call the data path and
// progress concurrently on different collComms; the application thread
// registers while they run. The SDK holds no lock while a member runs.
// The rules the class must keep, with NCCL's sources: docs/gin-rma.md.
#pragma once

#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/rma.h"
#include "ncclnet/detail/rma_exports.hpp"
#include "ncclnet/rma_types.hpp"

// Defines ncclRmaPlugin_v13/_v14/_v15 and ncclGinPlugin_v11/_v12/_v13 for
// `Impl`. Use once per library, at namespace scope.
#define NCCLNET_EXPORT_RMA_PLUGIN(Impl)                               \
  NCCLNET_CHECK_RMA_CONTRACT(Impl)                                    \
  NCCLNET_RMA_FOR_EACH_VERSION(NCCLNET_DETAIL_EXPORT_RMA_TABLE, Impl) \
  NCCLNET_GIN_PROXY_FOR_EACH_VERSION(NCCLNET_DETAIL_EXPORT_GIN_TABLE, Impl)
