/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: ncclRma_v13 (symbol ncclRmaPlugin_v13; NCCL 2.30.3 and
 * newer) is the GIN v13 layout under another name. NCCL 2.30.7
 * (plugin/rma/rma_v13.cc getNcclRma_v13) takes ncclRmaPlugin_v13 or else
 * ncclGinPlugin_v13, and refuses it unless getProperties(0) reports
 * NCCL_NET_DEVICE_GIN_PROXY. */
#ifndef NCCLNET_ABI_RMA_V13_H
#define NCCLNET_ABI_RMA_V13_H

#include "gin_v13.h"

typedef ncclGin_v13_t ncclRma_v13_t;

#endif /* NCCLNET_ABI_RMA_V13_H */
