// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host side): a loaded plugin table of any ABI version, seen
// through ncclNet_v12 semantics, the way NCCL's core sees it.
#pragma once

#include <cstdint>
#include <memory>

#include "ncclnet/abi/net.h"
#include "ncclnet/log.hpp"

namespace ncclnet::host {

enum class Optional { RegMrDmaBuf, GetDeviceMr, IrecvConsumed, MakeVDevice, SetNetAttr };
const char* optionalName(Optional op);

// Every member has the v12 signature. For older tables the view does what
// NCCL's compat layer does: init once per process for v6..v10 (refcounted,
// finalize only drops the count), the v10 connect config from the context,
// phandles dropped before v10, sizes narrowed to int for v6..v8 and
// refused (ncclInternalError and one WARN line) where NCCL's compat layer
// refuses them: isend/irecv above 1 GiB, regMr (v6, v7) above INT_MAX, irecv
// n outside 1..64 (the rows of ncclnet/detail/abi_versions.hpp), missing
// properties filled with NCCL's defaults. An optional function the table lacks returns
// ncclInternalError (check provides() first).
class NetView {
 public:
  virtual ~NetView() = default;

  virtual int version() const = 0;
  virtual const char* name() const = 0;
  virtual bool provides(Optional op) const = 0;

  virtual ncclResult_t init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                            ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) = 0;
  virtual ncclResult_t finalize(void* ctx) = 0;
  virtual ncclResult_t devices(int* ndev) = 0;
  virtual ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) = 0;
  virtual ncclResult_t listen(void* ctx, int dev, void* handle, void** listenComm) = 0;
  virtual ncclResult_t connect(void* ctx, int dev, void* handle, void** sendComm,
                               ncclNetDeviceHandle_v12_t** sendDevComm) = 0;
  virtual ncclResult_t accept(void* listenComm, void** recvComm,
                              ncclNetDeviceHandle_v12_t** recvDevComm) = 0;
  virtual ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) = 0;
  virtual ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset,
                                   int fd, void** mhandle) = 0;
  virtual ncclResult_t deregMr(void* comm, void* mhandle) = 0;
  virtual ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                             void* phandle, void** request) = 0;
  virtual ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags,
                             void** mhandles, void** phandles, void** request) = 0;
  virtual ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                              void** request) = 0;
  virtual ncclResult_t test(void* request, int* done, int* sizes) = 0;
  virtual ncclResult_t closeSend(void* sendComm) = 0;
  virtual ncclResult_t closeRecv(void* recvComm) = 0;
  virtual ncclResult_t closeListen(void* listenComm) = 0;
  virtual ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr) = 0;
  virtual ncclResult_t irecvConsumed(void* recvComm, int n, void* request) = 0;
  virtual ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) = 0;
  virtual ncclResult_t setNetAttr(void* ctx, ncclNetAttr_v12_t* attr) = 0;
};

// Wraps `table`, a `const ncclNet_v<version>_t*` found in a plugin. Returns
// nullptr for a version outside 6..12. The table must outlive the view.
std::unique_ptr<NetView> makeNetView(int version, const void* table, Logger logger);

}  // namespace ncclnet::host
