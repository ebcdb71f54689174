// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: one class for NCCL's CollNet tables (network-side
// collectives: all-reduce, all-gather, reduce-scatter among the nodes'
// head ranks). Write the semantics of the newest table (ncclCollNet_v12)
// once and export it with
//
//   NCCLNET_EXPORT_COLLNET_PLUGIN(MyCollNet)
//
// which defines ncclCollNetPlugin_v6 ... ncclCollNetPlugin_v12 (the list is
// abi/collnet.h's). Put it in the same library as the plugin's net table:
// NCCL looks for CollNet only there (plugin/net.cc ncclNetPluginLoad) and
// uses it with NCCL_COLLNET_ENABLE=1. docs/collnet.md says more.
//
//   class MyCollNet {
//    public:
//     static constexpr const char* kName = "my-collnet";
//     static ncclResult_t create(const ncclnet::InitArgs& args,
//                                std::unique_ptr<MyCollNet>* out);
//     ncclResult_t devices(int* ndev);
//     // `props` holds NCCL's defaults on entry (ncclnet::fillNcclDefaults),
//     // maxCollBytes 512 MiB among them.
//     ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
//     ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle,
//                         void** listenComm);
//     // Collective and blocking over the nranks heads: every head calls it
//     // with the all-gathered handles. Success with *collComm NULL declines
//     // the group (NCCL then uses point-to-point). The outcome must be the
//     // same on every head (NCCL agrees on it only within a node). On an
//     // error the SDK closes listenComm (NCCL never does): leave it open.
//     ncclResult_t connect(void* const* handles, int nranks, int rank, void* listenComm,
//                          void** collComm);
//     ncclResult_t reduceSupport(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported);
//     ncclResult_t regMr(void* collComm, void* data, size_t size, int type, void** mhandle);
//     ncclResult_t deregMr(void* collComm, void* mhandle);
//     // The three collectives: success with *request NULL means "not now",
//     // NCCL calls again.
//     ncclResult_t iallreduce(void* collComm, void* sendData, void* recvData, size_t count,
//                             ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,
//                             void* recvMhandle, void** request);
//     // The parts are valid during the call only; nRecvParts/nSendParts >= 1.
//     ncclResult_t iallgather(void* collComm, void* sendData, int nRecvParts,
//                             ncclNetSGE_v12_t* recvParts, size_t bytesPerRank,
//                             size_t windowOffset, size_t windowBytes, void* sendMhandle,
//                             void** request);
//     ncclResult_t ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts,
//                                 void* recvData, size_t bytesPerRank, size_t windowOffset,
//                                 size_t windowBytes, ncclDataType_t dataType,
//                                 ncclRedOp_t redOp, void* recvMhandle, void** request);
//     // *request NULL on success: nothing to flush.
//     ncclResult_t iflush(void* collComm, void* data, int size, void* mhandle, void** request);
//     ncclResult_t test(void* request, int* done, int* size);
//     ncclResult_t closeColl(void* collComm);
//     ncclResult_t closeListen(void* listenComm);
//     // optional:
//     ncclResult_t regMrDmaBuf(void* collComm, void* data, size_t size, int type,
//                              uint64_t offset, int fd, void** mhandle);
//     ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props);
//   };
//   NCCLNET_EXPORT_COLLNET_PLUGIN(MyCollNet)
//
// iallgather and ireducescatter are required: NCCL 2.28 and newer install
// wrappers that call them for tables v8 to v10 (and, from 2.30, v11)
// whether the plugin filled them or not (plugin/net/net_v8.cc ...
// net_v11.cc, ncclCollNet_init), and then believe all-gather and
// reduce-scatter supported. A class that cannot do them returns an error.
//
// What the SDK does for every class alike (detail/collnet_exports.hpp):
//  - one object per process, apart from the net plugin's object: created
//    at the first init; tables v11 and v12 destroy it at the last
//    finalize, while NCCL never finalizes v6 to v10, so the object then
//    lives until the library is unloaded;
//  - v6 to v10 listen without a context: the class gets the process's
//    CommContext;
//  - widens v6/v7's int sizes and counts (a negative one is refused) and
//    hands v8 to v11's parts over as v12 parts (1 to kMaxCollNetParts of
//    them);
//  - v6 to v8 carry no maxCollBytes: NCCL assumes 512 MiB there, so
//    through them the class gets operations that large whatever it
//    reported (an INFO line says so);
//  - clears NCCL_PTR_DMABUF from ptrSupport when the class has no
//    regMrDmaBuf, since NCCL calls it on that bit alone;
//  - refuses NULL outputs (ndev, props, supported, handle, listenComm,
//    collComm, mhandle, request, done) and NULL or empty part lists with
//    one WARN line and ncclInternalError; an escaping exception becomes
//    ncclInternalError.
// Threads: NCCL calls from the application's thread (setup, reduceSupport)
// and from its proxy thread (listen, connect, registration, the data
// path); the SDK holds no lock while a member runs.
#pragma once

#include "ncclnet/abi/collnet.h"
#include "ncclnet/collnet_contract.hpp"
#include "ncclnet/detail/collnet_exports.hpp"
#include "ncclnet/plugin_types.hpp"

// Defines ncclCollNetPlugin_v6 ... _v12 for `Impl`. Use once per library,
// at namespace scope.
#define NCCLNET_EXPORT_COLLNET_PLUGIN(Impl) \
  NCCLNET_CHECK_COLLNET_CONTRACT(Impl)      \
  NCCLNET_COLLNET_FOR_EACH_VERSION(NCCLNET_DETAIL_EXPORT_COLLNET_TABLE, Impl)
