/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: constants shared by the GIN (GPU-initiated networking) and
 * RMA (host one-sided) plugin tables, every version. NCCL: plugin/nccl_gin.h,
 * nccl_device/net_device.h (2.28.7 and newer). */
#ifndef NCCLNET_ABI_GIN_COMMON_H
#define NCCLNET_ABI_GIN_COMMON_H

#include <stdbool.h> /* queryLastError and v14's properties carry a C bool */

#include "common.h"
#include "net_device.h"

/* Handles from listen() are all-gathered and handed to connect(). */
#define NCCL_GIN_HANDLE_MAXSIZE 128

/* The remote atomic applied to the 64-bit signal word by iputSignal: INC adds
 * one, ADD adds signalValue. */
#define NCCL_GIN_SIGNAL_OP_INC 0x1
#define NCCL_GIN_SIGNAL_OP_ADD 0x2
#define NCCL_NET_SIGNAL_OP_INC NCCL_GIN_SIGNAL_OP_INC
#define NCCL_NET_SIGNAL_OP_ADD NCCL_GIN_SIGNAL_OP_ADD

/* Connections (contexts) one GIN or RMA communicator may ask for. */
#define NCCL_GIN_MAX_CONNECTIONS 4
#define NCCL_RMA_MAX_CONNECTIONS 4

/* netDeviceVersion of a proxy-type device (getProperties of a GIN/RMA
 * plugin reports netDeviceType NCCL_NET_DEVICE_GIN_PROXY). */
#define NCCL_GIN_PROXY_VERSION 100

#endif /* NCCLNET_ABI_GIN_COMMON_H */
