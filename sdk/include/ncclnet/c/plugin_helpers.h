/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-net-sdk for plugins written in C: NCCL's property defaults and the
 * conversions the C++ export layer (<ncclnet/plugin.hpp>) applies between
 * ABI versions, as static inline functions. C11 and C++, no library to link.
 *
 * A C plugin implements v12 semantics once and exports older tables through
 * small shims that convert at the edge:
 *
 *   static ncclResult_t myGetProperties(int dev, ncclNetProperties_v12_t* props) {
 *     ncclnetPropertiesInit(props, dev);  // NCCL's defaults, then the NIC's values
 *     props->name = "mynic0";
 *     ...
 *   }
 *   static ncclResult_t myGetPropertiesV11(int dev, ncclNetProperties_v11_t* props) {
 *     ncclNetProperties_v12_t v12;
 *     const char* why = "";
 *     ncclResult_t res = myGetProperties(dev, &v12);
 *     if (res != ncclSuccess) return res;
 *     res = ncclnetPropertiesV12ToV11(&v12, props, &why);
 *     if (res != ncclSuccess) log a WARN line with `why`;
 *     return res;
 *   }
 *
 * Every function returns ncclInternalError for a value the other side cannot
 * hold, exactly where the C++ export layer does; none truncates. */
#ifndef NCCLNET_C_PLUGIN_HELPERS_H
#define NCCLNET_C_PLUGIN_HELPERS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ncclnet/abi/net.h"
#include "ncclnet/c/abi_limits.h" /* NCCLNET_MAX_GROUPED_RECVS and the int-size limits */

/* ---- property defaults ---------------------------------------------------- */

/* Zeroes *props and gives every field NCCL's default, the value NCCL's
 * compat layer gives a field an older plugin cannot report: a host device
 * that is its own single virtual device, 1 GiB / 512 MiB transfer limits, no
 * multi-request, rail and plane unknown. The plugin then sets what it knows. */
static inline void ncclnetPropertiesInit(ncclNetProperties_v12_t* props, int dev) {
  memset(props, 0, sizeof(*props));
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  props->regIsGlobal = 0;
  props->forceFlush = 0;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = NCCL_MAX_NET_SIZE;
  props->maxCollBytes = NCCL_MAX_COLLNET_SIZE;
  props->maxMultiRequestSize = 1;
  props->railId = NCCL_NET_ID_UNDEF;
  props->planeId = NCCL_NET_ID_UNDEF;
}

/* ---- field groups, in the order the versions added them ------------------ */

#define NCCLNET_DETAIL_COPY_V6_FIELDS(out, in) \
  do {                                         \
    (out)->name = (in)->name;                  \
    (out)->pciPath = (in)->pciPath;            \
    (out)->guid = (in)->guid;                  \
    (out)->ptrSupport = (in)->ptrSupport;      \
    (out)->speed = (in)->speed;                \
    (out)->port = (in)->port;                  \
    (out)->latency = (in)->latency;            \
    (out)->maxComms = (in)->maxComms;          \
    (out)->maxRecvs = (in)->maxRecvs;          \
  } while (0)

#define NCCLNET_DETAIL_COPY_DEVICE_FIELDS(out, in) /* v7 */ \
  do {                                                      \
    (out)->netDeviceType = (in)->netDeviceType;             \
    (out)->netDeviceVersion = (in)->netDeviceVersion;       \
  } while (0)

/* v9: forceFlush, the virtual device and the transfer limits. The device
 * list is copied up to the narrower of the two widths; the callers check
 * ndevs against the width first where a value must not be lost. */
#define NCCLNET_DETAIL_COPY_V9_FIELDS(out, in)                                       \
  do {                                                                               \
    int ncclnetI_;                                                                   \
    const int ncclnetWidth_ = (int)(sizeof((out)->vProps.devs) / sizeof(int)) <      \
                                      (int)(sizeof((in)->vProps.devs) / sizeof(int)) \
                                  ? (int)(sizeof((out)->vProps.devs) / sizeof(int))  \
                                  : (int)(sizeof((in)->vProps.devs) / sizeof(int));  \
    (out)->forceFlush = (in)->forceFlush;                                            \
    (out)->vProps.ndevs = (in)->vProps.ndevs;                                        \
    for (ncclnetI_ = 0; ncclnetI_ < (in)->vProps.ndevs && ncclnetI_ < ncclnetWidth_; \
         ncclnetI_++) {                                                              \
      (out)->vProps.devs[ncclnetI_] = (in)->vProps.devs[ncclnetI_];                  \
    }                                                                                \
    (out)->maxP2pBytes = (in)->maxP2pBytes;                                          \
    (out)->maxCollBytes = (in)->maxCollBytes;                                        \
  } while (0)

#define NCCLNET_DETAIL_COPY_RAIL_FIELDS(out, in) /* v12 */ \
  do {                                                     \
    (out)->railId = (in)->railId;                          \
    (out)->planeId = (in)->planeId;                        \
  } while (0)

/* ---- v12 -> older properties (what getProperties of an older table returns) */

/* A device-offload device cannot be described before v7, and a virtual
 * device wider than the older array cannot be described at all. */
static inline ncclResult_t ncclnetDetailCheckDown(const ncclNetProperties_v12_t* in,
                                                  int hasDeviceType, int vDevsWidth,
                                                  const char** why) {
  if (!hasDeviceType && in->netDeviceType != NCCL_NET_DEVICE_HOST) {
    *why = "a device-offload (netDeviceType != HOST) device needs ABI v7 or newer";
    return ncclInternalError;
  }
  if (vDevsWidth > 0 && (in->vProps.ndevs < 0 || in->vProps.ndevs > vDevsWidth)) {
    *why = "vProps.ndevs exceeds the devices per virtual NIC this ABI version allows";
    return ncclInternalError;
  }
  return ncclSuccess;
}

static inline ncclResult_t ncclnetPropertiesV12ToV6(const ncclNetProperties_v12_t* in,
                                                    ncclNetProperties_v6_t* out, const char** why) {
  memset(out, 0, sizeof(*out));
  if (ncclnetDetailCheckDown(in, 0, 0, why) != ncclSuccess) return ncclInternalError;
  NCCLNET_DETAIL_COPY_V6_FIELDS(out, in);
  return ncclSuccess;
}

static inline ncclResult_t ncclnetPropertiesV12ToV7(const ncclNetProperties_v12_t* in,
                                                    ncclNetProperties_v7_t* out, const char** why) {
  (void)why;
  memset(out, 0, sizeof(*out));
  NCCLNET_DETAIL_COPY_V6_FIELDS(out, in);
  NCCLNET_DETAIL_COPY_DEVICE_FIELDS(out, in);
  return ncclSuccess;
}

static inline ncclResult_t ncclnetPropertiesV12ToV8(const ncclNetProperties_v12_t* in,
                                                    ncclNetProperties_v8_t* out, const char** why) {
  (void)why;
  memset(out, 0, sizeof(*out));
  NCCLNET_DETAIL_COPY_V6_FIELDS(out, in);
  NCCLNET_DETAIL_COPY_DEVICE_FIELDS(out, in);
  out->regIsGlobal = in->regIsGlobal;
  return ncclSuccess;
}

static inline ncclResult_t ncclnetPropertiesV12ToV9(const ncclNetProperties_v12_t* in,
                                                    ncclNetProperties_v9_t* out, const char** why) {
  memset(out, 0, sizeof(*out));
  if (ncclnetDetailCheckDown(in, 1, NCCL_NET_MAX_DEVS_PER_NIC_V9, why) != ncclSuccess) {
    return ncclInternalError;
  }
  NCCLNET_DETAIL_COPY_V6_FIELDS(out, in);
  NCCLNET_DETAIL_COPY_DEVICE_FIELDS(out, in);
  out->regIsGlobal = in->regIsGlobal;
  NCCLNET_DETAIL_COPY_V9_FIELDS(out, in);
  return ncclSuccess;
}

/* v10 has v9's properties. */
static inline ncclResult_t ncclnetPropertiesV12ToV10(const ncclNetProperties_v12_t* in,
                                                     ncclNetProperties_v10_t* out,
                                                     const char** why) {
  return ncclnetPropertiesV12ToV9(in, out, why);
}

static inline ncclResult_t ncclnetPropertiesV12ToV11(const ncclNetProperties_v12_t* in,
                                                     ncclNetProperties_v11_t* out,
                                                     const char** why) {
  memset(out, 0, sizeof(*out));
  if (ncclnetDetailCheckDown(in, 1, NCCL_NET_MAX_DEVS_PER_NIC_V11, why) != ncclSuccess) {
    return ncclInternalError;
  }
  NCCLNET_DETAIL_COPY_V6_FIELDS(out, in);
  NCCLNET_DETAIL_COPY_DEVICE_FIELDS(out, in);
  out->regIsGlobal = in->regIsGlobal;
  NCCLNET_DETAIL_COPY_V9_FIELDS(out, in);
  out->maxMultiRequestSize = in->maxMultiRequestSize;
  return ncclSuccess;
}

/* ---- older -> v12 properties (a C host reading an older plugin) ---------- */
/* Fields the version lacks keep ncclnetPropertiesInit's defaults for `dev`. */

static inline void ncclnetPropertiesV6ToV12(const ncclNetProperties_v6_t* in, int dev,
                                            ncclNetProperties_v12_t* out) {
  ncclnetPropertiesInit(out, dev);
  NCCLNET_DETAIL_COPY_V6_FIELDS(out, in);
}

static inline void ncclnetPropertiesV7ToV12(const ncclNetProperties_v7_t* in, int dev,
                                            ncclNetProperties_v12_t* out) {
  ncclnetPropertiesInit(out, dev);
  NCCLNET_DETAIL_COPY_V6_FIELDS(out, in);
  NCCLNET_DETAIL_COPY_DEVICE_FIELDS(out, in);
}

static inline void ncclnetPropertiesV8ToV12(const ncclNetProperties_v8_t* in, int dev,
                                            ncclNetProperties_v12_t* out) {
  ncclnetPropertiesInit(out, dev);
  NCCLNET_DETAIL_COPY_V6_FIELDS(out, in);
  NCCLNET_DETAIL_COPY_DEVICE_FIELDS(out, in);
  out->regIsGlobal = in->regIsGlobal;
}

static inline void ncclnetPropertiesV9ToV12(const ncclNetProperties_v9_t* in, int dev,
                                            ncclNetProperties_v12_t* out) {
  ncclnetPropertiesInit(out, dev);
  NCCLNET_DETAIL_COPY_V6_FIELDS(out, in);
  NCCLNET_DETAIL_COPY_DEVICE_FIELDS(out, in);
  out->regIsGlobal = in->regIsGlobal;
  NCCLNET_DETAIL_COPY_V9_FIELDS(out, in);
}

static inline void ncclnetPropertiesV10ToV12(const ncclNetProperties_v10_t* in, int dev,
                                             ncclNetProperties_v12_t* out) {
  ncclnetPropertiesV9ToV12(in, dev, out);
}

static inline void ncclnetPropertiesV11ToV12(const ncclNetProperties_v11_t* in, int dev,
                                             ncclNetProperties_v12_t* out) {
  ncclnetPropertiesInit(out, dev);
  NCCLNET_DETAIL_COPY_V6_FIELDS(out, in);
  NCCLNET_DETAIL_COPY_DEVICE_FIELDS(out, in);
  out->regIsGlobal = in->regIsGlobal;
  NCCLNET_DETAIL_COPY_V9_FIELDS(out, in);
  out->maxMultiRequestSize = in->maxMultiRequestSize;
}

/* ---- virtual devices (makeVDevice): v9..v11 hold 4 devices, v12 holds 8 -- */

#define NCCLNET_DETAIL_COPY_VDEVICE(out, in, width)                           \
  do {                                                                        \
    int ncclnetI_;                                                            \
    if ((in)->ndevs < 0 || (in)->ndevs > (width)) return ncclInvalidArgument; \
    memset((out), 0, sizeof(*(out)));                                         \
    (out)->ndevs = (in)->ndevs;                                               \
    for (ncclnetI_ = 0; ncclnetI_ < (in)->ndevs; ncclnetI_++) {               \
      (out)->devs[ncclnetI_] = (in)->devs[ncclnetI_];                         \
    }                                                                         \
    return ncclSuccess;                                                       \
  } while (0)

/* v9 and v10 share the struct. */
static inline ncclResult_t ncclnetVDevicePropsV9ToV12(const ncclNetVDeviceProps_v9_t* in,
                                                      ncclNetVDeviceProps_v12_t* out) {
  NCCLNET_DETAIL_COPY_VDEVICE(out, in, NCCL_NET_MAX_DEVS_PER_NIC_V9);
}
static inline ncclResult_t ncclnetVDevicePropsV11ToV12(const ncclNetVDeviceProps_v11_t* in,
                                                       ncclNetVDeviceProps_v12_t* out) {
  NCCLNET_DETAIL_COPY_VDEVICE(out, in, NCCL_NET_MAX_DEVS_PER_NIC_V11);
}
static inline ncclResult_t ncclnetVDevicePropsV12ToV9(const ncclNetVDeviceProps_v12_t* in,
                                                      ncclNetVDeviceProps_v9_t* out) {
  NCCLNET_DETAIL_COPY_VDEVICE(out, in, NCCL_NET_MAX_DEVS_PER_NIC_V9);
}
static inline ncclResult_t ncclnetVDevicePropsV12ToV11(const ncclNetVDeviceProps_v12_t* in,
                                                       ncclNetVDeviceProps_v11_t* out) {
  NCCLNET_DETAIL_COPY_VDEVICE(out, in, NCCL_NET_MAX_DEVS_PER_NIC_V11);
}

/* ---- sizes: int in v6..v8 (regMr to v7, isend and irecv to v8) ----------- */
/* Each refuses, never truncates, exactly what NCCL's compat layer refuses
 * (<ncclnet/c/abi_limits.h>): a message above 1 GiB, a registration above
 * INT_MAX. A negative int size is a caller bug. */

/* An int isend size from an older table, for the size_t interface. */
static inline ncclResult_t ncclnetWidenSize(int in, size_t* out) {
  if (in < 0 || (size_t)in > (size_t)NCCLNET_INT_MESSAGE_SIZE_MAX) return ncclInternalError;
  *out = (size_t)in;
  return ncclSuccess;
}

/* An int regMr size (v6, v7), for the size_t interface. */
static inline ncclResult_t ncclnetWidenRegMrSize(int in, size_t* out) {
  if (in < 0 || (size_t)in > (size_t)NCCLNET_INT_REGMR_SIZE_MAX) return ncclInternalError;
  *out = (size_t)in;
  return ncclSuccess;
}

/* The int sizes of an older irecv (n of them) for the size_t interface:
 * refuses n outside 1..NCCLNET_MAX_GROUPED_RECVS, NULL sizes and a size
 * ncclnetWidenSize refuses. `out` holds NCCLNET_MAX_GROUPED_RECVS entries. */
static inline ncclResult_t ncclnetWidenSizes(int n, const int* in, size_t* out) {
  int i;
  if (n < 1 || n > NCCLNET_MAX_GROUPED_RECVS || in == NULL) return ncclInternalError;
  for (i = 0; i < n; i++) {
    if (ncclnetWidenSize(in[i], &out[i]) != ncclSuccess) return ncclInternalError;
  }
  return ncclSuccess;
}

/* A size_t isend/irecv size for an older table's int (a host calling a
 * v6..v8 plugin): above 1 GiB it is refused, as NCCL does. */
static inline ncclResult_t ncclnetNarrowSize(size_t in, int* out) {
  if (in > (size_t)NCCLNET_INT_MESSAGE_SIZE_MAX) return ncclInternalError;
  *out = (int)in;
  return ncclSuccess;
}

/* A size_t regMr size for a v6/v7 table's int: above INT_MAX it is refused. */
static inline ncclResult_t ncclnetNarrowRegMrSize(size_t in, int* out) {
  if (in > (size_t)NCCLNET_INT_REGMR_SIZE_MAX) return ncclInternalError;
  *out = (int)in;
  return ncclSuccess;
}

#endif /* NCCLNET_C_PLUGIN_HELPERS_H */
