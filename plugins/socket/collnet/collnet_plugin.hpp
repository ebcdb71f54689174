// SPDX-License-Identifier: Apache-2.0
// sdk-socket CollNet: a software CollNet for NCCL_COLLNET_ENABLE=1. The
// in-network reduction a SHARP-type switch would do is emulated by the
// CollNet group's members (NCCL's "heads", one per node) over TCP: every
// member sends its contribution to every other and all reduce in rank
// order (coll_comm.hpp). It is the reference the CollNet conformance
// checks are measured against, so it is exact rather than fast.
//
// The devices are the net table's (same interfaces, same order): NCCL's
// topology matches CollNet and net devices by index (graph/topo.cc). Host
// memory only: without GPUDirect NCCL stages CollNet data through host
// buffers and never needs iflush (coll_net.cc recvSetup asks
// ncclTopoNeedFlush only when ncclTopoCheckGdr allowed GDR, and
// recvProxyProgress flushes only then).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../config.hpp"
#include "ncclnet/abi/collnet_v12.h"
#include "ncclnet/interfaces.hpp"
#include "ncclnet/params.hpp"
#include "ncclnet/plugin_types.hpp"

namespace ncclnet::socket::collnet {

// The largest operation (iallreduce's count * element size, the window of
// iallgather / ireducescatter). NCCL cuts registered user buffers into
// operations of at most this many bytes (coll_net.cc collNetRegIallreduce
// and friends) and otherwise posts slices of its staging buffer, far
// smaller. Every operation stages each peer's contribution in host memory
// until it is folded, so one operation holds (nranks - 1) times this at
// most; 64 MiB keeps a collComm's worst case (NCCL_STEPS operations in
// flight per channel) within reach of a host, and is far below NCCL's own
// cap (NCCL_MAX_NET_SIZE_BYTES, coll_net.cc sendProxySetup).
constexpr size_t kMaxCollBytes = size_t{64} << 20;

class SocketCollNet {
 public:
  static constexpr const char* kName = "sdk-socket";

  static ncclResult_t create(const InitArgs& args, std::unique_ptr<SocketCollNet>* out);

  ncclResult_t devices(int* ndev);
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
  ncclResult_t listen(const CommContext& ctx, int dev, void* handle, void** listenComm);
  ncclResult_t connect(void* const* handles, int nranks, int rank, void* listenComm,
                       void** collComm);
  ncclResult_t reduceSupport(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported);
  ncclResult_t regMr(void* collComm, void* data, size_t size, int type, void** mhandle);
  ncclResult_t deregMr(void* collComm, void* mhandle);
  ncclResult_t iallreduce(void* collComm, void* sendData, void* recvData, size_t count,
                          ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,
                          void* recvMhandle, void** request);
  ncclResult_t iallgather(void* collComm, void* sendData, int nRecvParts,
                          ncclNetSGE_v12_t* recvParts, size_t bytesPerRank, size_t windowOffset,
                          size_t windowBytes, void* sendMhandle, void** request);
  ncclResult_t ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts,
                              void* recvData, size_t bytesPerRank, size_t windowOffset,
                              size_t windowBytes, ncclDataType_t dataType, ncclRedOp_t redOp,
                              void* recvMhandle, void** request);
  ncclResult_t iflush(void* collComm, void* data, int size, void* mhandle, void** request);
  ncclResult_t test(void* request, int* done, int* size);
  ncclResult_t closeColl(void* collComm);
  ncclResult_t closeListen(void* listenComm);

 private:
  explicit SocketCollNet(Logger log) : log_(log), params_(log) {}
  bool validDevice(const char* fn, int dev) const;

  Logger log_;
  ParamTable params_;
  Config config_;
  std::vector<Interface> interfaces_;  // fixed after create(); the net table's order
};

}  // namespace ncclnet::socket::collnet
