/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: every supported net plugin ABI version (v6 ... v12).
 * A C plugin includes this header and exports ncclNetPlugin_vN tables;
 * a C++ plugin uses <ncclnet/plugin.hpp> instead. */
#ifndef NCCLNET_ABI_NET_H
#define NCCLNET_ABI_NET_H

#include "common.h"
#include "net_device.h"
#include "net_v6.h"
#include "net_v7.h"
#include "net_v8.h"
#include "net_v9.h"
#include "net_v10.h"
#include "net_v11.h"
#include "net_v12.h"

/* The versions this SDK knows, oldest and newest. */
#define NCCLNET_ABI_OLDEST 6
#define NCCLNET_ABI_NEWEST 12

/* Expands X(arg, N) for every version N this SDK knows, oldest first: the
 * SDK's export macro and ncclnet-check define one table per expansion. The
 * list agrees with NCCLNET_ABI_OLDEST..NEWEST and with the rows of
 * <ncclnet/detail/abi_versions.hpp> (checked there). */
#define NCCLNET_ABI_FOR_EACH_VERSION(X, arg) \
  X(arg, 6) X(arg, 7) X(arg, 8) X(arg, 9) X(arg, 10) X(arg, 11) X(arg, 12)

#endif /* NCCLNET_ABI_NET_H */
