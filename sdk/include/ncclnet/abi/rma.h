/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: every RMA plugin table version (ncclRmaPlugin_v13 to v15).
 * Which NCCL release looks for which, and where: docs/gin-rma.md. */
#ifndef NCCLNET_ABI_RMA_H
#define NCCLNET_ABI_RMA_H

#include "gin_common.h"
#include "rma_v13.h"
#include "rma_v14.h"
#include "rma_v15.h"

#define NCCLNET_RMA_ABI_OLDEST 13
#define NCCLNET_RMA_ABI_NEWEST 15
#define NCCLNET_RMA_FOR_EACH_VERSION(X, arg) X(arg, 13) X(arg, 14) X(arg, 15)

#endif /* NCCLNET_ABI_RMA_H */
