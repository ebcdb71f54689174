/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: every CollNet plugin table version (ncclCollNetPlugin_v6 ...
 * v12, numbered as the net tables and searched in the same library). */
#ifndef NCCLNET_ABI_COLLNET_H
#define NCCLNET_ABI_COLLNET_H

#include "net.h"
#include "collnet_v10.h"
#include "collnet_v11.h"
#include "collnet_v12.h"
#include "collnet_v6.h"
#include "collnet_v7.h"
#include "collnet_v8.h"
#include "collnet_v9.h"

#define NCCLNET_COLLNET_FOR_EACH_VERSION(X, arg) NCCLNET_ABI_FOR_EACH_VERSION(X, arg)

#endif /* NCCLNET_ABI_COLLNET_H */
