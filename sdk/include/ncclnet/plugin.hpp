// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the plugin author's interface.
//
// Write one class with ncclNet_v12 semantics and export it with
//
//   NCCLNET_EXPORT_PLUGIN(MyNet)
//
// which defines the const tables ncclNetPlugin_v6 ... ncclNetPlugin_v12 and
// nothing else. The SDK adapts every older version to the one class, the way
// NCCL's own compat layer adapts old plugins to its core (see docs/abi.md).
//
// The class, in full (the last five members are optional: leave one out and
// its slot is NULL in every table, which NCCL reads as "not supported"):
//
//   class MyNet {
//    public:
//     static constexpr const char* kName = "my-net";   // NCCL_NET matches this
//     // Called on the first init of the process (of any ABI version); the
//     // object lives until the last finalize (v11+), or until the library is
//     // unloaded when an older NCCL (which never finalizes) loaded it.
//     static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<MyNet>* out);
//     ncclResult_t devices(int* ndev);
//     ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
//     ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle,
//                         void** listenComm);
//     ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, void* handle, void** sendComm,
//                          ncclNetDeviceHandle_v12_t** sendDevComm);
//     ncclResult_t accept(void* listenComm, void** recvComm,
//                         ncclNetDeviceHandle_v12_t** recvDevComm);
//     ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle);
//     ncclResult_t deregMr(void* comm, void* mhandle);
//     ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
//                        void* phandle, void** request);
//     ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags,
//                        void** mhandles, void** phandles, void** request);
//     ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
//                         void** request);
//     ncclResult_t test(void* request, int* done, int* sizes);
//     ncclResult_t closeSend(void* sendComm);
//     ncclResult_t closeRecv(void* recvComm);
//     ncclResult_t closeListen(void* listenComm);
//     // optional:
//     ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset,
//                              int fd, void** mhandle);
//     ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr_mhandle);
//     ncclResult_t irecvConsumed(void* recvComm, int n, void* request);
//     ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props);
//     ncclResult_t setNetAttr(const ncclnet::CommContext& ctx, const ncclNetAttr_v12_t& attr);
//     // optional, for tools: every knob the plugin read (ncclnet-info --params)
//     const ncclnet::ParamTable& params() const;
//   };
//
// The export macro checks the class first (<ncclnet/plugin_contract.hpp>):
// each member missing, or declared with another signature than the one
// above, is one compile error that names it and spells its signature.
//
// Exceptions never cross the C boundary: one escaping a member becomes
// ncclInternalError and a WARN line.
#pragma once

#include "ncclnet/abi/net.h"
#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/detail/export_tables.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/object_model.hpp"
#include "ncclnet/object_model_contract.hpp"
#include "ncclnet/params.hpp"
#include "ncclnet/plugin_contract.hpp"
#include "ncclnet/plugin_types.hpp"

// Checks `Impl` against the contract above, then defines ncclNetPlugin_v6
// ... ncclNetPlugin_v12 for it (one table per row of
// ncclnet/detail/abi_versions.hpp). Use once per plugin library, at
// namespace scope.
#define NCCLNET_EXPORT_PLUGIN(Impl)         \
  NCCLNET_CHECK_PLUGIN_CONTRACT(Impl)       \
  NCCLNET_CHECK_OBJECT_MODEL_CONTRACT(Impl) \
  NCCLNET_ABI_FOR_EACH_VERSION(NCCLNET_DETAIL_EXPORT_TABLE, Impl)
