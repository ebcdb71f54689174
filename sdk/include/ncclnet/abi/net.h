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

#endif /* NCCLNET_ABI_NET_H */
