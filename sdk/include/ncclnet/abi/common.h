/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: types and constants shared by every net plugin ABI version. */
#ifndef NCCLNET_ABI_COMMON_H
#define NCCLNET_ABI_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"

/* Log levels and subsystem flags of NCCL's logger callback. */
typedef enum {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

typedef enum {
  NCCL_INIT = 0x1,
  NCCL_COLL = 0x2,
  NCCL_P2P = 0x4,
  NCCL_SHM = 0x8,
  NCCL_NET = 0x10,
  NCCL_GRAPH = 0x20,
  NCCL_TUNING = 0x40,
  NCCL_ENV = 0x80,
  NCCL_ALLOC = 0x100,
  NCCL_CALL = 0x200,
  NCCL_PROXY = 0x400,
  NCCL_NVLS = 0x800,
  NCCL_BOOTSTRAP = 0x1000,
  NCCL_REG = 0x2000,
  NCCL_PROFILE = 0x4000,
  NCCL_RAS = 0x8000,
  NCCL_DESTROY = 0x10000,
  NCCL_ALLOC_HOST = 0x20000,
  NCCL_ALL = ~0
} ncclDebugLogSubSys;

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags,
                                  const char* file, int line, const char* fmt, ...);

/* Profiler callback handed to init() from v10 on. */
enum {
  ncclProfilerNetEventStart = 0,
  ncclProfilerNetEventStop = 1,
  ncclProfilerNetEventUpdate = 2,
  ncclProfilerNetEventUpdateAndStop = 3
};
typedef ncclResult_t (*ncclProfilerCallback_t)(void** eHandle, int type, void* pHandle,
                                               int64_t pluginId, void* extData);

/* Handle buffer NCCL passes to listen/connect (128 bytes since v5). */
#define NCCL_NET_HANDLE_MAXSIZE 128

/* Memory types for regMr/regMrDmaBuf and the ptrSupport property. */
#define NCCL_PTR_HOST 0x1
#define NCCL_PTR_CUDA 0x2
#define NCCL_PTR_DMABUF 0x4

/* Outstanding requests a comm must support (a sendComm: this x maxRecvs). */
#define NCCL_NET_MAX_REQUESTS 32

/* NCCL may pre-set *request to this value before irecv (LL/LL128, v9+):
 * the plugin may complete such a receive early, but must overwrite *request. */
#define NCCL_NET_OPTIONAL_RECV_COMPLETION 0x1
#define NCCL_NET_MULTI_REQUEST 0x2

/* Registration flags (setNetAttr-era hints). */
#define NCCL_NET_MR_FLAG_FORCE_SO (1 << 0)
#define NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET (1 << 1)

/* Size limits: maxP2pBytes/maxCollBytes must lie in (0, NCCL_MAX_NET_SIZE_BYTES];
 * NCCL never issues a single transfer larger than NCCL_MAX_NET_SIZE. */
#define NCCL_MAX_NET_SIZE_BYTES (1ull << 40)
#define NCCL_MAX_NET_SIZE (1ull << 30)
#define NCCL_MAX_COLLNET_SIZE (1ull << 29)

#define NCCL_NET_TRAFFIC_CLASS_UNDEF -1
#define NCCL_NET_ATTR_UNDEF -1
#define NCCL_NET_ID_UNDEF -1

#endif /* NCCLNET_ABI_COMMON_H */
