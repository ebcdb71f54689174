/* SPDX-License-Identifier: Apache-2.0
 * cnet: a plugin in C11, the way a vendor without C++ writes one with
 * <ncclnet/c/plugin_helpers.h>. One v12 implementation; the v11 table
 * reaches it through shims that convert properties and virtual devices with
 * the helpers. Devices and virtual devices are real; connections are not
 * (listen, connect and the data path return ncclInternalError): the helpers
 * convert descriptions, and that is what the tests through the Loader read.
 *
 * Device d < kPhysical is a NIC whose properties tell the versions apart
 * (maxMultiRequestSize from v11, rail and plane from v12); makeVDevice adds
 * virtual devices after them, up to 8 NICs wide, which v11 cannot describe
 * beyond 4. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ncclnet/abi/net.h"
#include "ncclnet/c/plugin_helpers.h"

enum { kPhysical = 2, kMaxVirtual = 8 };

/* The C ABI carries no context for devices() and getProperties(): the
 * plugin's devices are process state. */
static ncclNetVDeviceProps_v12_t virtualDevices[kMaxVirtual];
static int virtualCount;
static int contexts;
static char contextToken; /* what init hands out: its address, never read */

static ncclResult_t cnetInit(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                             ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction) {
  (void)commId;
  (void)config;
  (void)logFunction;
  (void)profFunction;
  if (ctx == NULL) return ncclInternalError;
  *ctx = &contextToken;
  contexts++;
  return ncclSuccess;
}

static ncclResult_t cnetFinalize(void* ctx) {
  if (ctx == NULL) return ncclSuccess; /* after a failed init (NCCL 2.28) */
  if (ctx != &contextToken || contexts == 0) return ncclInternalError;
  contexts--;
  return ncclSuccess;
}

static ncclResult_t cnetDevices(int* ndev) {
  if (ndev == NULL) return ncclInternalError;
  *ndev = kPhysical + virtualCount;
  return ncclSuccess;
}

static ncclResult_t cnetGetProperties(int dev, ncclNetProperties_v12_t* props) {
  static char* const names[kPhysical] = {(char*)"cnet0", (char*)"cnet1"};
  if (props == NULL || dev < 0 || dev >= kPhysical + virtualCount) return ncclInternalError;
  ncclnetPropertiesInit(props, dev);
  props->name = dev < kPhysical ? names[dev] : (char*)"cnet-virtual";
  props->pciPath = NULL;
  props->guid = 0x636e657400000000ull + (uint64_t)dev;
  props->ptrSupport = NCCL_PTR_HOST;
  props->speed = 100000;
  props->port = 1;
  props->latency = 2.5f;
  props->maxComms = 1024;
  props->maxRecvs = 4;
  props->maxMultiRequestSize = 2;
  props->railId = (int16_t)dev;
  props->planeId = 0;
  if (dev >= kPhysical) props->vProps = virtualDevices[dev - kPhysical];
  return ncclSuccess;
}

static ncclResult_t cnetMakeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
  int i;
  if (d == NULL || props == NULL || virtualCount == kMaxVirtual) return ncclInternalError;
  if (props->ndevs < 1 || props->ndevs > NCCL_NET_MAX_DEVS_PER_NIC_V12) return ncclInvalidArgument;
  for (i = 0; i < props->ndevs; i++) {
    if (props->devs[i] < 0 || props->devs[i] >= kPhysical) return ncclInvalidArgument;
  }
  virtualDevices[virtualCount] = *props;
  *d = kPhysical + virtualCount++;
  return ncclSuccess;
}

/* ---- v11: the same functions, older structs -------------------------------- */

static ncclResult_t cnetGetPropertiesV11(int dev, ncclNetProperties_v11_t* props) {
  ncclNetProperties_v12_t v12;
  const char* why = "";
  ncclResult_t res = cnetGetProperties(dev, &v12);
  if (res != ncclSuccess) return res;
  return ncclnetPropertiesV12ToV11(&v12, props, &why);
}

static ncclResult_t cnetMakeVDeviceV11(int* d, ncclNetVDeviceProps_v11_t* props) {
  ncclNetVDeviceProps_v12_t v12;
  if (props == NULL || ncclnetVDevicePropsV11ToV12(props, &v12) != ncclSuccess) {
    return ncclInternalError;
  }
  return cnetMakeVDevice(d, &v12);
}

/* ---- what this plugin does not do ------------------------------------------ */

static ncclResult_t cnetListen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx, (void)dev, (void)handle, (void)listenComm;
  return ncclInternalError;
}
static ncclResult_t cnetConnect(void* ctx, int dev, void* handle, void** sendComm,
                                ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)ctx, (void)dev, (void)handle, (void)sendComm, (void)sendDevComm;
  return ncclInternalError;
}
static ncclResult_t cnetAccept(void* listenComm, void** recvComm,
                               ncclNetDeviceHandle_v12_t** recvDevComm) {
  (void)listenComm, (void)recvComm, (void)recvDevComm;
  return ncclInternalError;
}
static ncclResult_t cnetRegMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  (void)comm, (void)data, (void)size, (void)type, (void)mhandle;
  return ncclInternalError;
}
static ncclResult_t cnetDeregMr(void* comm, void* mhandle) {
  (void)comm, (void)mhandle;
  return ncclInternalError;
}
static ncclResult_t cnetIsend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                              void* phandle, void** request) {
  (void)sendComm, (void)data, (void)size, (void)tag, (void)mhandle, (void)phandle, (void)request;
  return ncclInternalError;
}
static ncclResult_t cnetIrecv(void* recvComm, int n, void** data, size_t* sizes, int* tags,
                              void** mhandles, void** phandles, void** request) {
  (void)recvComm, (void)n, (void)data, (void)sizes, (void)tags, (void)mhandles, (void)phandles;
  (void)request;
  return ncclInternalError;
}
static ncclResult_t cnetIflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                               void** request) {
  (void)recvComm, (void)n, (void)data, (void)sizes, (void)mhandles, (void)request;
  return ncclInternalError;
}
static ncclResult_t cnetTest(void* request, int* done, int* sizes) {
  (void)request, (void)done, (void)sizes;
  return ncclInternalError;
}
static ncclResult_t cnetClose(void* comm) {
  (void)comm;
  return ncclInternalError;
}

/* Unsupported optional functions stay NULL: NCCL reads NULL as "absent". */
__attribute__((visibility("default"))) const ncclNet_v12_t ncclNetPlugin_v12 = {
    .name = "sdk-cnet",
    .init = cnetInit,
    .devices = cnetDevices,
    .getProperties = cnetGetProperties,
    .listen = cnetListen,
    .connect = cnetConnect,
    .accept = cnetAccept,
    .regMr = cnetRegMr,
    .regMrDmaBuf = NULL,
    .deregMr = cnetDeregMr,
    .isend = cnetIsend,
    .irecv = cnetIrecv,
    .iflush = cnetIflush,
    .test = cnetTest,
    .closeSend = cnetClose,
    .closeRecv = cnetClose,
    .closeListen = cnetClose,
    .getDeviceMr = NULL,
    .irecvConsumed = NULL,
    .makeVDevice = cnetMakeVDevice,
    .finalize = cnetFinalize,
    .setNetAttr = NULL,
};

__attribute__((visibility("default"))) const ncclNet_v11_t ncclNetPlugin_v11 = {
    .name = "sdk-cnet",
    .init = cnetInit,
    .devices = cnetDevices,
    .getProperties = cnetGetPropertiesV11,
    .listen = cnetListen,
    .connect = cnetConnect,
    .accept = cnetAccept,
    .regMr = cnetRegMr,
    .regMrDmaBuf = NULL,
    .deregMr = cnetDeregMr,
    .isend = cnetIsend,
    .irecv = cnetIrecv,
    .iflush = cnetIflush,
    .test = cnetTest,
    .closeSend = cnetClose,
    .closeRecv = cnetClose,
    .closeListen = cnetClose,
    .getDeviceMr = NULL,
    .irecvConsumed = NULL,
    .makeVDevice = cnetMakeVDeviceV11,
    .finalize = cnetFinalize,
    .setNetAttr = NULL,
};
