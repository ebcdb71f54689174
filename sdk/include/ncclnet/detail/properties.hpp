// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: field-by-field conversion between ncclNetProperties_v12_t
// and every older properties struct. Which fields a version has is detected
// from the struct itself, so each rule (a default, a width check) is written
// once for all versions instead of once per version.
#pragma once

#include <cstring>
#include <type_traits>

#include "ncclnet/abi/net.h"
#include "ncclnet/log.hpp"

#pragma GCC visibility push(hidden)

namespace ncclnet::detail {

#define NCCLNET_DETECT_FIELD(field)                                                           \
  template <class T, class = void>                                                            \
  struct has_##field : std::false_type {};                                                    \
  template <class T>                                                                          \
  struct has_##field<T, std::void_t<decltype(std::declval<T&>().field)>> : std::true_type {}; \
  template <class T>                                                                          \
  constexpr bool has_##field##_v = has_##field<T>::value;

NCCLNET_DETECT_FIELD(regIsGlobal)
NCCLNET_DETECT_FIELD(forceFlush)
NCCLNET_DETECT_FIELD(netDeviceType)
NCCLNET_DETECT_FIELD(vProps)
NCCLNET_DETECT_FIELD(maxMultiRequestSize)
NCCLNET_DETECT_FIELD(railId)
NCCLNET_DETECT_FIELD(netDeviceVersion)
NCCLNET_DETECT_FIELD(maxP2pBytes)
NCCLNET_DETECT_FIELD(maxCollBytes)
NCCLNET_DETECT_FIELD(planeId)
#undef NCCLNET_DETECT_FIELD

template <class Props>
constexpr int maxVDevsOf() {
  if constexpr (has_vProps_v<Props>) {
    return static_cast<int>(sizeof(Props{}.vProps.devs) / sizeof(int));
  } else {
    return 1;
  }
}

// v12 -> older (export side). Fails when the v12 values cannot be expressed
// in the older struct (a virtual NIC wider than the version allows); the
// caller logs and returns the error.
template <class Props>
ncclResult_t propertiesFromV12(const ncclNetProperties_v12_t& in, Props* out, const char** why) {
  std::memset(static_cast<void*>(out), 0, sizeof(*out));
  out->name = in.name;
  out->pciPath = in.pciPath;
  out->guid = in.guid;
  out->ptrSupport = in.ptrSupport;
  out->speed = in.speed;
  out->port = in.port;
  out->latency = in.latency;
  out->maxComms = in.maxComms;
  out->maxRecvs = in.maxRecvs;
  if constexpr (has_netDeviceType_v<Props>) {
    out->netDeviceType = in.netDeviceType;
    out->netDeviceVersion = in.netDeviceVersion;
  } else if (in.netDeviceType != NCCL_NET_DEVICE_HOST) {
    *why = "a device-offload (netDeviceType != HOST) device needs ABI v7 or newer";
    return ncclInternalError;
  }
  if constexpr (has_regIsGlobal_v<Props>) out->regIsGlobal = in.regIsGlobal;
  if constexpr (has_forceFlush_v<Props>) out->forceFlush = in.forceFlush;
  if constexpr (has_vProps_v<Props>) {
    if (in.vProps.ndevs < 0 || in.vProps.ndevs > maxVDevsOf<Props>()) {
      *why = "vProps.ndevs exceeds the devices per virtual NIC this ABI version allows";
      return ncclInternalError;
    }
    out->vProps.ndevs = in.vProps.ndevs;
    for (int i = 0; i < in.vProps.ndevs; i++) out->vProps.devs[i] = in.vProps.devs[i];
    out->maxP2pBytes = in.maxP2pBytes;
    out->maxCollBytes = in.maxCollBytes;
  }
  if constexpr (has_maxMultiRequestSize_v<Props>) out->maxMultiRequestSize = in.maxMultiRequestSize;
  if constexpr (has_railId_v<Props>) {
    out->railId = in.railId;
    out->planeId = in.planeId;
  }
  return ncclSuccess;
}

// older -> v12 (import side). Fields the version lacks get the values
// NCCL's own compat layer gives them.
template <class Props>
void propertiesToV12(const Props& in, int dev, ncclNetProperties_v12_t* out) {
  std::memset(static_cast<void*>(out), 0, sizeof(*out));
  out->name = in.name;
  out->pciPath = in.pciPath;
  out->guid = in.guid;
  out->ptrSupport = in.ptrSupport;
  out->speed = in.speed;
  out->port = in.port;
  out->latency = in.latency;
  out->maxComms = in.maxComms;
  out->maxRecvs = in.maxRecvs;
  out->netDeviceType = NCCL_NET_DEVICE_HOST;
  out->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  if constexpr (has_netDeviceType_v<Props>) {
    out->netDeviceType = in.netDeviceType;
    out->netDeviceVersion = in.netDeviceVersion;
  }
  out->regIsGlobal = 0;
  if constexpr (has_regIsGlobal_v<Props>) out->regIsGlobal = in.regIsGlobal;
  out->forceFlush = 0;
  out->vProps.ndevs = 1;
  out->vProps.devs[0] = dev;
  out->maxP2pBytes = NCCL_MAX_NET_SIZE;
  out->maxCollBytes = NCCL_MAX_COLLNET_SIZE;
  if constexpr (has_vProps_v<Props>) {
    out->forceFlush = in.forceFlush;
    // An older struct cannot hold more than its width; copy what is there.
    int n = in.vProps.ndevs;
    if (n > maxVDevsOf<Props>()) n = maxVDevsOf<Props>();
    out->vProps.ndevs = in.vProps.ndevs;
    for (int i = 0; i < n; i++) out->vProps.devs[i] = in.vProps.devs[i];
    out->maxP2pBytes = in.maxP2pBytes;
    out->maxCollBytes = in.maxCollBytes;
  }
  out->maxMultiRequestSize = 1;
  if constexpr (has_maxMultiRequestSize_v<Props>) out->maxMultiRequestSize = in.maxMultiRequestSize;
  out->railId = NCCL_NET_ID_UNDEF;
  out->planeId = NCCL_NET_ID_UNDEF;
  if constexpr (has_railId_v<Props>) {
    out->railId = in.railId;
    out->planeId = in.planeId;
  }
}

// Virtual-device descriptions: v9..v11 hold 4 devices, v12 holds 8.
template <class VProps>
ncclResult_t vPropsToV12(const VProps& in, ncclNetVDeviceProps_v12_t* out) {
  constexpr int width = static_cast<int>(sizeof(in.devs) / sizeof(int));
  if (in.ndevs < 0 || in.ndevs > width) return ncclInvalidArgument;
  std::memset(static_cast<void*>(out), 0, sizeof(*out));
  out->ndevs = in.ndevs;
  for (int i = 0; i < in.ndevs; i++) out->devs[i] = in.devs[i];
  return ncclSuccess;
}

template <class VProps>
ncclResult_t vPropsFromV12(const ncclNetVDeviceProps_v12_t& in, VProps* out) {
  constexpr int width = static_cast<int>(sizeof(out->devs) / sizeof(int));
  if (in.ndevs < 0 || in.ndevs > width) return ncclInvalidArgument;
  std::memset(static_cast<void*>(out), 0, sizeof(*out));
  out->ndevs = in.ndevs;
  for (int i = 0; i < in.ndevs; i++) out->devs[i] = in.devs[i];
  return ncclSuccess;
}

// For a table whose DMA-BUF registration slot is NULL: NCCL decides to call
// that slot by NCCL_PTR_DMABUF alone (coll_net.cc sendProxySetup,
// gin_host_proxy.cc ncclGinProxyRegMrSym, rma_proxy.cc ncclRmaProxyRegMrSym),
// so the bit goes, with an INFO line naming the missing `member`.
inline void clearDmaBufWithout(const char* member, const Logger& log, int dev,
                               ncclNetProperties_v12_t* props) {
  if ((props->ptrSupport & NCCL_PTR_DMABUF) == 0) return;
  NCCLNET_INFO(log, NCCL_NET, "getProperties(dev %d): NCCL_PTR_DMABUF cleared, the class has no %s",
               dev, member);
  props->ptrSupport &= ~NCCL_PTR_DMABUF;
}

}  // namespace ncclnet::detail

#pragma GCC visibility pop
