/* SPDX-License-Identifier: Apache-2.0
 * Sizes and field offsets of every ABI struct (LP64), as NCCL lays them out
 * (research notes §1.4, §2). Included from a C and a C++ translation unit so
 * that both languages see the same layout. */
#ifndef NCCLNET_TESTS_ABI_LAYOUT_CHECKS_H
#define NCCLNET_TESTS_ABI_LAYOUT_CHECKS_H

#include <stddef.h>

#include "ncclnet/abi/net.h"

#ifdef __cplusplus
#define NCCLNET_STATIC_ASSERT static_assert
#else
#define NCCLNET_STATIC_ASSERT _Static_assert
#endif
#define CHECK_SIZE(type, size) NCCLNET_STATIC_ASSERT(sizeof(type) == (size), #type " size")
#define CHECK_OFFSET(type, field, off) \
  NCCLNET_STATIC_ASSERT(offsetof(type, field) == (off), #type "." #field " offset")

CHECK_SIZE(ncclNetProperties_v6_t, 48);
CHECK_OFFSET(ncclNetProperties_v6_t, name, 0);
CHECK_OFFSET(ncclNetProperties_v6_t, pciPath, 8);
CHECK_OFFSET(ncclNetProperties_v6_t, guid, 16);
CHECK_OFFSET(ncclNetProperties_v6_t, ptrSupport, 24);
CHECK_OFFSET(ncclNetProperties_v6_t, speed, 28);
CHECK_OFFSET(ncclNetProperties_v6_t, port, 32);
CHECK_OFFSET(ncclNetProperties_v6_t, latency, 36);
CHECK_OFFSET(ncclNetProperties_v6_t, maxComms, 40);
CHECK_OFFSET(ncclNetProperties_v6_t, maxRecvs, 44);

CHECK_SIZE(ncclNetProperties_v7_t, 56);
CHECK_OFFSET(ncclNetProperties_v7_t, maxRecvs, 44);
CHECK_OFFSET(ncclNetProperties_v7_t, netDeviceType, 48);
CHECK_OFFSET(ncclNetProperties_v7_t, netDeviceVersion, 52);

CHECK_SIZE(ncclNetProperties_v8_t, 64);
CHECK_OFFSET(ncclNetProperties_v8_t, ptrSupport, 24);
CHECK_OFFSET(ncclNetProperties_v8_t, regIsGlobal, 28);
CHECK_OFFSET(ncclNetProperties_v8_t, speed, 32);
CHECK_OFFSET(ncclNetProperties_v8_t, port, 36);
CHECK_OFFSET(ncclNetProperties_v8_t, latency, 40);
CHECK_OFFSET(ncclNetProperties_v8_t, maxComms, 44);
CHECK_OFFSET(ncclNetProperties_v8_t, maxRecvs, 48);
CHECK_OFFSET(ncclNetProperties_v8_t, netDeviceType, 52);
CHECK_OFFSET(ncclNetProperties_v8_t, netDeviceVersion, 56);

CHECK_SIZE(ncclNetProperties_v9_t, 104);
CHECK_OFFSET(ncclNetProperties_v9_t, regIsGlobal, 28);
CHECK_OFFSET(ncclNetProperties_v9_t, forceFlush, 32);
CHECK_OFFSET(ncclNetProperties_v9_t, speed, 36);
CHECK_OFFSET(ncclNetProperties_v9_t, port, 40);
CHECK_OFFSET(ncclNetProperties_v9_t, latency, 44);
CHECK_OFFSET(ncclNetProperties_v9_t, maxComms, 48);
CHECK_OFFSET(ncclNetProperties_v9_t, maxRecvs, 52);
CHECK_OFFSET(ncclNetProperties_v9_t, netDeviceType, 56);
CHECK_OFFSET(ncclNetProperties_v9_t, netDeviceVersion, 60);
CHECK_OFFSET(ncclNetProperties_v9_t, vProps, 64);
CHECK_OFFSET(ncclNetProperties_v9_t, maxP2pBytes, 88);
CHECK_OFFSET(ncclNetProperties_v9_t, maxCollBytes, 96);
CHECK_SIZE(ncclNetProperties_v10_t, 104);

CHECK_SIZE(ncclNetProperties_v11_t, 112);
CHECK_OFFSET(ncclNetProperties_v11_t, vProps, 64);
CHECK_OFFSET(ncclNetProperties_v11_t, maxP2pBytes, 88);
CHECK_OFFSET(ncclNetProperties_v11_t, maxCollBytes, 96);
CHECK_OFFSET(ncclNetProperties_v11_t, maxMultiRequestSize, 104);

CHECK_SIZE(ncclNetProperties_v12_t, 128);
CHECK_OFFSET(ncclNetProperties_v12_t, name, 0);
CHECK_OFFSET(ncclNetProperties_v12_t, pciPath, 8);
CHECK_OFFSET(ncclNetProperties_v12_t, guid, 16);
CHECK_OFFSET(ncclNetProperties_v12_t, ptrSupport, 24);
CHECK_OFFSET(ncclNetProperties_v12_t, regIsGlobal, 28);
CHECK_OFFSET(ncclNetProperties_v12_t, forceFlush, 32);
CHECK_OFFSET(ncclNetProperties_v12_t, speed, 36);
CHECK_OFFSET(ncclNetProperties_v12_t, port, 40);
CHECK_OFFSET(ncclNetProperties_v12_t, latency, 44);
CHECK_OFFSET(ncclNetProperties_v12_t, maxComms, 48);
CHECK_OFFSET(ncclNetProperties_v12_t, maxRecvs, 52);
CHECK_OFFSET(ncclNetProperties_v12_t, netDeviceType, 56);
CHECK_OFFSET(ncclNetProperties_v12_t, netDeviceVersion, 60);
CHECK_OFFSET(ncclNetProperties_v12_t, vProps, 64);
CHECK_OFFSET(ncclNetProperties_v12_t, maxP2pBytes, 104);
CHECK_OFFSET(ncclNetProperties_v12_t, maxCollBytes, 112);
CHECK_OFFSET(ncclNetProperties_v12_t, maxMultiRequestSize, 120);
CHECK_OFFSET(ncclNetProperties_v12_t, railId, 124);
CHECK_OFFSET(ncclNetProperties_v12_t, planeId, 126);

CHECK_SIZE(ncclNetVDeviceProps_v9_t, 20);
CHECK_SIZE(ncclNetVDeviceProps_v11_t, 20);
CHECK_SIZE(ncclNetVDeviceProps_v12_t, 36);

CHECK_SIZE(ncclNetDeviceHandle_v7_t, 32);
CHECK_OFFSET(ncclNetDeviceHandle_v7_t, netDeviceType, 0);
CHECK_OFFSET(ncclNetDeviceHandle_v7_t, netDeviceVersion, 4);
CHECK_OFFSET(ncclNetDeviceHandle_v7_t, handle, 8);
CHECK_OFFSET(ncclNetDeviceHandle_v7_t, size, 16);
CHECK_OFFSET(ncclNetDeviceHandle_v7_t, needsProxyProgress, 24);
CHECK_SIZE(ncclNetDeviceHandle_v12_t, 32);

CHECK_SIZE(ncclNetCommConfig_v10_t, 4);
CHECK_SIZE(ncclNetCommConfig_v11_t, 4);
CHECK_SIZE(ncclNetCommAttr_v11_t, 16);
CHECK_SIZE(ncclNetAttr_v11_t, 44);
CHECK_OFFSET(ncclNetAttr_v11_t, recvCommAttr, 16);
CHECK_OFFSET(ncclNetAttr_v11_t, op, 32);
CHECK_OFFSET(ncclNetAttr_v11_t, algo, 36);
CHECK_OFFSET(ncclNetAttr_v11_t, proto, 40);
CHECK_SIZE(ncclNetAttr_v12_t, 44);

/* Unpack metadata: 16 x 2048 entries of 16 bytes plus 16 counters. */
CHECK_SIZE(ncclNetUnpackLoadMeta, 16);
CHECK_OFFSET(ncclNetUnpackLoadMeta, src_off, 0);
CHECK_OFFSET(ncclNetUnpackLoadMeta, len, 4);
CHECK_OFFSET(ncclNetUnpackLoadMeta, dst_off, 8);
CHECK_SIZE(ncclNetUnpackMeta, 524416);
CHECK_OFFSET(ncclNetUnpackMeta, cnt, 524288);
CHECK_SIZE(ncclNetUnpackDeviceHandle, 24);

/* Function tables: name + functions, one pointer each. */
#define CHECK_TABLE(type, pointers) CHECK_SIZE(type, (pointers) * sizeof(void*))
CHECK_TABLE(ncclNet_v6_t, 17);
CHECK_TABLE(ncclNet_v7_t, 19);
CHECK_TABLE(ncclNet_v8_t, 19);
CHECK_TABLE(ncclNet_v9_t, 20);
CHECK_TABLE(ncclNet_v10_t, 20);
CHECK_TABLE(ncclNet_v11_t, 22);
CHECK_TABLE(ncclNet_v12_t, 22);
/* Appended members sit where older NCCLs never look. */
CHECK_OFFSET(ncclNet_v7_t, getDeviceMr, 17 * sizeof(void*));
CHECK_OFFSET(ncclNet_v9_t, makeVDevice, 19 * sizeof(void*));
CHECK_OFFSET(ncclNet_v11_t, finalize, 20 * sizeof(void*));
CHECK_OFFSET(ncclNet_v12_t, setNetAttr, 21 * sizeof(void*));

NCCLNET_STATIC_ASSERT(NCCL_NET_HANDLE_MAXSIZE == 128, "handle size");
NCCLNET_STATIC_ASSERT(NCCL_NET_MAX_REQUESTS == 32, "max requests");
NCCLNET_STATIC_ASSERT(NCCL_NET_OPTIONAL_RECV_COMPLETION == 0x1, "optional completion");
NCCLNET_STATIC_ASSERT(NCCL_NET_DEVICE_UNPACK_VERSION == 0x7, "unpack version");
NCCLNET_STATIC_ASSERT(NCCL_PTR_HOST == 1 && NCCL_PTR_CUDA == 2 && NCCL_PTR_DMABUF == 4, "ptr types");
NCCLNET_STATIC_ASSERT(NCCL_MAX_NET_SIZE_BYTES == 1099511627776ull, "1 TiB");

#endif
