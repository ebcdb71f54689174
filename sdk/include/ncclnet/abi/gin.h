/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: every GIN plugin table version (ncclGinPlugin_v11 ... v14).
 * Which NCCL release looks for which, and where: docs/gin-rma.md. */
#ifndef NCCLNET_ABI_GIN_H
#define NCCLNET_ABI_GIN_H

#include "gin_common.h"
#include "gin_v11.h"
#include "gin_v12.h"
#include "gin_v13.h"
#include "gin_v14.h"

#define NCCLNET_GIN_ABI_OLDEST 11
#define NCCLNET_GIN_ABI_NEWEST 14
#define NCCLNET_GIN_FOR_EACH_VERSION(X, arg) X(arg, 11) X(arg, 12) X(arg, 13) X(arg, 14)
/* The versions with a host data path (iput, iputSignal, test) that NCCL's
 * GIN proxy drives; v14 tables serve device backends only. */
#define NCCLNET_GIN_PROXY_FOR_EACH_VERSION(X, arg) X(arg, 11) X(arg, 12) X(arg, 13)

#endif /* NCCLNET_ABI_GIN_H */
