/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: ncclNet_v6 (NCCL 2.13-2.18 native; accepted up to 2.30).
 * Exported as ncclNetPlugin_v6. Sizes are int; no device offload. */
#ifndef NCCLNET_ABI_NET_V6_H
#define NCCLNET_ABI_NET_V6_H

#include "common.h"

#define NCCL_NET_MAX_REQUESTS_V6 8

typedef struct {
  char* name;      /* used in logs; unique per device */
  char* pciPath;   /* /sys PCI device directory, or NULL for virtual NICs */
  uint64_t guid;   /* equal guid+port means the same fabric port */
  int ptrSupport;  /* NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF */
  int speed;       /* Mbps */
  int port;
  float latency;   /* microseconds; 0 = NCCL's default */
  int maxComms;
  int maxRecvs;    /* largest n for a grouped irecv */
} ncclNetProperties_v6_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  ncclResult_t (*devices)(int* ndev);
  ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t* props);
  ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
  ncclResult_t (*connect)(int dev, void* handle, void** sendComm);
  ncclResult_t (*accept)(void* listenComm, void** recvComm);
  ncclResult_t (*regMr)(void* comm, void* data, int size, int type, void** mhandle);
  ncclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset,
                              int fd, void** mhandle);
  ncclResult_t (*deregMr)(void* comm, void* mhandle);
  ncclResult_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle,
                        void** request);
  ncclResult_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags,
                        void** mhandles, void** request);
  ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                         void** request);
  ncclResult_t (*test)(void* request, int* done, int* sizes);
  ncclResult_t (*closeSend)(void* sendComm);
  ncclResult_t (*closeRecv)(void* recvComm);
  ncclResult_t (*closeListen)(void* listenComm);
} ncclNet_v6_t;

#endif /* NCCLNET_ABI_NET_V6_H */
