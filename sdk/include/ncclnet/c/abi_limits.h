/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-net-sdk: the numbers behind the refusals of NCCL's compat layer
 * (src/plugin/net/net_v6.cc ... net_v8.cc), for C and C++ alike. Which ABI
 * version applies which limit is one table: <ncclnet/detail/abi_versions.hpp>
 * (the C helpers in <ncclnet/c/plugin_helpers.h> apply these numbers). */
#ifndef NCCLNET_C_ABI_LIMITS_H
#define NCCLNET_C_ABI_LIMITS_H

#include <limits.h>

#include "ncclnet/abi/common.h"

/* Largest n of a grouped receive through any NCCL: NCCL_PROXY_MAX_SUBS
 * (src/include/proxy.h), which is MAXCHANNELS (src/include/device.h), in
 * NCCL 2.28 and 2.30 alike. The compat layer of the int-size tables copies
 * the sizes into an array of that many entries (ncclNet_irecv). */
#define NCCLNET_MAX_GROUPED_RECVS 64

/* Largest isend/irecv size an int-size table (v6..v8) is given: the compat
 * layer's ncclNet_isend and ncclNet_irecv refuse `size > MAX_NET_SIZE`
 * (1 GiB, src/include/plugin/nccl_net.h) with ncclInternalError. */
#define NCCLNET_INT_MESSAGE_SIZE_MAX NCCL_MAX_NET_SIZE

/* Largest regMr size an int-size regMr (v6, v7) is given: the compat
 * layer's ncclNet_regMr refuses `size >= 1UL << 31`, i.e. above INT_MAX. */
#define NCCLNET_INT_REGMR_SIZE_MAX INT_MAX

#endif /* NCCLNET_C_ABI_LIMITS_H */
