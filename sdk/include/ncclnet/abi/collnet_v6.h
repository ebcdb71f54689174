/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: ncclCollNet_v6 (symbol ncclCollNetPlugin_v6; NCCL 2.13 and newer):
 * all-reduce only, int sizes.
 * NCCL looks for it in the net plugin's library only (plugin/net.cc
 * ncclNetPluginLoad) and uses it with NCCL_COLLNET_ENABLE=1. */
#ifndef NCCLNET_ABI_COLLNET_V6_H
#define NCCLNET_ABI_COLLNET_V6_H

#include "collective_types.h"
#include "common.h"
#include "net_v6.h"

typedef struct {
  const char* name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  ncclResult_t (*devices)(int* ndev);
  ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t* props);
  ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
  /* Collective: every rank passes the all-gathered handles of all ranks. */
  ncclResult_t (*connect)(void* handles[], int nranks, int rank, void* listenComm, void** collComm);
  ncclResult_t (*reduceSupport)(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported);
  ncclResult_t (*regMr)(void* collComm, void* data, int size, int type, void** mhandle);
  ncclResult_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset,
                              int fd, void** mhandle);
  ncclResult_t (*deregMr)(void* collComm, void* mhandle);
  ncclResult_t (*iallreduce)(void* collComm, void* sendData, void* recvData, int count,
                             ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,
                             void* recvMhandle, void** request);
  ncclResult_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  ncclResult_t (*test)(void* request, int* done, int* size);
  ncclResult_t (*closeColl)(void* collComm);
  ncclResult_t (*closeListen)(void* listenComm);
} ncclCollNet_v6_t;

#endif /* NCCLNET_ABI_COLLNET_V6_H */
