/* SPDX-License-Identifier: Apache-2.0
 * Sizes and member offsets (LP64) of the GIN, RMA and CollNet tables and
 * their config structs, in NCCL's declaration order (NCCL 2.28.9
 * plugin/net/net_v*.h; 2.30.3 gin/gin_v12.h; 2.30.7 gin/gin_v13.h,
 * gin/gin_v14.h, rma/rma_v14.h). Included after abi_layout_checks.h from a
 * C and a C++ translation unit. */
#ifndef NCCLNET_TESTS_ABI_LAYOUT_CHECKS_TABLES_H
#define NCCLNET_TESTS_ABI_LAYOUT_CHECKS_TABLES_H

#include "ncclnet/abi/collnet.h"
#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/rma.h"

#define CHECK_MEMBER(type, member, index) CHECK_OFFSET(type, member, (index) * sizeof(void*))

/* GIN: name, init, devices, ... finalize. */
CHECK_TABLE(ncclGin_v11_t, 19);
CHECK_MEMBER(ncclGin_v11_t, createContext, 6);
CHECK_MEMBER(ncclGin_v11_t, iput, 13);
CHECK_MEMBER(ncclGin_v11_t, test, 15);
CHECK_MEMBER(ncclGin_v11_t, finalize, 18);
CHECK_TABLE(ncclGin_v12_t, 19);
CHECK_MEMBER(ncclGin_v12_t, iputSignal, 14);
CHECK_TABLE(ncclGin_v13_t, 21);
CHECK_MEMBER(ncclGin_v13_t, iget, 15);
CHECK_MEMBER(ncclGin_v13_t, iflush, 16);
CHECK_MEMBER(ncclGin_v13_t, test, 17);
CHECK_MEMBER(ncclGin_v13_t, finalize, 20);
CHECK_TABLE(ncclGin_v14_t, 17);
CHECK_MEMBER(ncclGin_v14_t, getGinProperties, 3);
CHECK_MEMBER(ncclGin_v14_t, getProperties, 4);
CHECK_MEMBER(ncclGin_v14_t, ginProgress, 14);
CHECK_SIZE(ncclGinConfig_v13_t, 20);
CHECK_SIZE(ncclGinConfig_v14_t, 28);
CHECK_OFFSET(ncclGinConfig_v14_t, rankStride, 24);
CHECK_SIZE(ncclGinProperties_v14_t, 2);

/* RMA v13 is GIN v13; v14 drops ginHandle and the device handle. */
CHECK_TABLE(ncclRma_v13_t, 21);
CHECK_TABLE(ncclRma_v14_t, 21);
CHECK_MEMBER(ncclRma_v14_t, createContext, 6);
CHECK_MEMBER(ncclRma_v14_t, iputSignal, 14);
CHECK_MEMBER(ncclRma_v14_t, rmaProgress, 18);
CHECK_SIZE(ncclRmaConfig_v14_t, 12);
/* RMA v15: v14's members, optFlags added to iput, iputSignal and iget
 * (aws-ofi-nccl v1.21.1's vendored rma_v15.h). */
CHECK_TABLE(ncclRma_v15_t, 21);
CHECK_MEMBER(ncclRma_v15_t, iput, 13);
CHECK_MEMBER(ncclRma_v15_t, iget, 15);
CHECK_MEMBER(ncclRma_v15_t, finalize, 20);
CHECK_SIZE(ncclRmaConfig_v15_t, 12);

/* CollNet: iallgather/ireducescatter from v8, makeVDevice from v9,
 * finalize from v11. */
CHECK_TABLE(ncclCollNet_v6_t, 15);
CHECK_TABLE(ncclCollNet_v7_t, 15);
CHECK_TABLE(ncclCollNet_v8_t, 17);
CHECK_MEMBER(ncclCollNet_v8_t, iallgather, 11);
CHECK_MEMBER(ncclCollNet_v8_t, ireducescatter, 12);
CHECK_TABLE(ncclCollNet_v9_t, 18);
CHECK_MEMBER(ncclCollNet_v9_t, makeVDevice, 17);
CHECK_TABLE(ncclCollNet_v10_t, 18);
CHECK_TABLE(ncclCollNet_v11_t, 19);
CHECK_MEMBER(ncclCollNet_v11_t, finalize, 18);
CHECK_TABLE(ncclCollNet_v12_t, 19);
CHECK_SIZE(ncclNetSGE_v8_t, 24);
CHECK_OFFSET(ncclNetSGE_v8_t, size, 16);
CHECK_SIZE(ncclNetSGE_v12_t, 24);
CHECK_SIZE(ncclDataType_t, 4);
CHECK_SIZE(ncclRedOp_t, 4);

NCCLNET_STATIC_ASSERT(NCCL_GIN_SIGNAL_OP_INC == 1 && NCCL_GIN_SIGNAL_OP_ADD == 2, "signal ops");
NCCLNET_STATIC_ASSERT(NCCL_NET_DEVICE_GIN_PROXY == 2, "GIN proxy device type");
NCCLNET_STATIC_ASSERT(NCCL_NET_MR_FLAG_FORCE_SO == 1, "FORCE_SO");
NCCLNET_STATIC_ASSERT(ncclFloat8e5m2 == 11 && ncclAvg == 4, "NCCL's enumerators");

#endif
