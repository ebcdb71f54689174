/* SPDX-License-Identifier: Apache-2.0
 * Fixture plugins for the loader tests, in plain C the way a vendor without
 * the SDK writes them. One source, one variant per build (-DFIXTURE_...):
 *   ONLY_V7        exports ncclNetPlugin_v7 only
 *   NO_SYMBOL      exports no plugin table at all
 *   NULL_NAME      ncclNetPlugin_v12 with name == NULL
 *   UNPACK_V6      device 0 advertises UNPACK version 6 (NCCL wants 7)
 *   ZERO_DEVICES   devices() reports 0
 *   BAD_PROPS      loads, but with properties ncclnet-info must warn about
 * Only what the loader and ncclnet-info touch is implemented; the data path
 * returns ncclInternalError. */
#include <stddef.h>
#include <string.h>

#include "ncclnet/abi/net.h"

#if defined(FIXTURE_ONLY_V7)
#define FIXTURE_NAME "fixture-v7"
#elif defined(FIXTURE_NULL_NAME)
#define FIXTURE_NAME NULL
#elif defined(FIXTURE_UNPACK_V6)
#define FIXTURE_NAME "fixture-unpack6"
#elif defined(FIXTURE_ZERO_DEVICES)
#define FIXTURE_NAME "fixture-nodev"
#elif defined(FIXTURE_BAD_PROPS)
#define FIXTURE_NAME "fixture-badprops"
#else
#define FIXTURE_NAME "fixture"
#endif

__attribute__((unused)) static ncclResult_t fixtureDevices(int* ndev) {
#ifdef FIXTURE_ZERO_DEVICES
  *ndev = 0;
#elif defined(FIXTURE_BAD_PROPS)
  *ndev = 2;
#else
  *ndev = 1;
#endif
  return ncclSuccess;
}

__attribute__((unused)) static ncclResult_t unsupported(void) { return ncclInternalError; }

#define UNSUPPORTED (void*)unsupported

#if defined(FIXTURE_ONLY_V7)
static ncclResult_t initV7(ncclDebugLogger_t logFunction) {
  (void)logFunction;
  return ncclSuccess;
}
static ncclResult_t propsV7(int dev, ncclNetProperties_v7_t* props) {
  memset(props, 0, sizeof(*props));
  props->name = (char*)"fixture-v7-dev0";
  props->guid = (uint64_t)dev;
  props->ptrSupport = NCCL_PTR_HOST;
  props->speed = 25000;
  props->maxComms = 64;
  props->maxRecvs = 1;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  return ncclSuccess;
}
__attribute__((visibility("default"))) const ncclNet_v7_t ncclNetPlugin_v7 = {
    .name = FIXTURE_NAME,
    .init = initV7,
    .devices = fixtureDevices,
    .getProperties = propsV7,
    .listen = UNSUPPORTED,
    .connect = UNSUPPORTED,
    .accept = UNSUPPORTED,
    .regMr = UNSUPPORTED,
    .regMrDmaBuf = NULL,
    .deregMr = UNSUPPORTED,
    .isend = UNSUPPORTED,
    .irecv = UNSUPPORTED,
    .iflush = UNSUPPORTED,
    .test = UNSUPPORTED,
    .closeSend = UNSUPPORTED,
    .closeRecv = UNSUPPORTED,
    .closeListen = UNSUPPORTED,
    .getDeviceMr = NULL,
    .irecvConsumed = NULL,
};
#elif defined(FIXTURE_NO_SYMBOL)
/* A library that is not a net plugin: it exports something else. */
__attribute__((visibility("default"))) int fixtureNotAPlugin = 1;
#else
static ncclResult_t initV12(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                            ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction) {
  (void)commId, (void)config, (void)logFunction, (void)profFunction;
  *ctx = (void*)0x1;
  return ncclSuccess;
}
static ncclResult_t finalizeV12(void* ctx) {
  (void)ctx;
  return ncclSuccess;
}
static ncclResult_t propsV12(int dev, ncclNetProperties_v12_t* props) {
  memset(props, 0, sizeof(*props));
  props->name = (char*)"fixture-dev";
  props->guid = (uint64_t)dev;
  props->ptrSupport = NCCL_PTR_HOST;
  props->speed = 100000;
  props->maxComms = 64;
  props->maxRecvs = 1;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
  props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
  props->maxMultiRequestSize = 1;
  props->railId = NCCL_NET_ID_UNDEF;
  props->planeId = NCCL_NET_ID_UNDEF;
#ifdef FIXTURE_UNPACK_V6
  props->netDeviceType = NCCL_NET_DEVICE_UNPACK;
  props->netDeviceVersion = 6;
#endif
#ifdef FIXTURE_BAD_PROPS
  /* Every device: same name, speed 0, maxRecvs 9, DMABUF without
   * regMrDmaBuf, maxP2pBytes over 1 TiB, a pciPath that does not exist. */
  props->speed = 0;
  props->maxRecvs = 9;
  props->ptrSupport = NCCL_PTR_HOST | NCCL_PTR_DMABUF;
  props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES * 2;
  props->pciPath = (char*)"/sys/devices/nowhere/0000:ff:00.0";
#endif
  return ncclSuccess;
}
__attribute__((visibility("default"))) const ncclNet_v12_t ncclNetPlugin_v12 = {
    .name = FIXTURE_NAME,
    .init = initV12,
    .devices = fixtureDevices,
    .getProperties = propsV12,
    .listen = UNSUPPORTED,
    .connect = UNSUPPORTED,
    .accept = UNSUPPORTED,
    .regMr = UNSUPPORTED,
    .regMrDmaBuf = NULL,
    .deregMr = UNSUPPORTED,
    .isend = UNSUPPORTED,
    .irecv = UNSUPPORTED,
    .iflush = UNSUPPORTED,
    .test = UNSUPPORTED,
    .closeSend = UNSUPPORTED,
    .closeRecv = UNSUPPORTED,
    .closeListen = UNSUPPORTED,
    .getDeviceMr = NULL,
    .irecvConsumed = NULL,
    .makeVDevice = NULL,
    .finalize = finalizeV12,
    .setNetAttr = NULL,
};
#endif
