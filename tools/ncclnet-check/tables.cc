// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the exported tables ncclNetPlugin_v6 ... _v12. Each is a
// thin shim over Checker's v12 calls, written against the ABI headers
// rather than through NCCLNET_EXPORT_PLUGIN: the tables must carry the
// wrapped plugin's name and leave NULL exactly the optional slots the
// wrapped plugin leaves NULL, and neither is known before this library is
// loaded. So the tables are filled at compile time and patched once, by the
// library constructor, before dlopen returns.
//
// What this relies on in NCCL (src/plugin/net.cc, NCCL 2.28/2.30):
// ncclNetPluginLoad dlsym()s the tables newest first right after dlopen
// (the v6..v9 shims in src/plugin/net/net_vN.cc copy the name there), and
// ncclNetInit compares NCCL_NET with ncclNet->name (strcasecmp) before it
// calls init. A constructor runs inside dlopen, before both.
#include <cstring>

#include "checker.hpp"
#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/detail/properties.hpp"

namespace {

using ncclnet::check::Checker;
using ncclnet::detail::kAbi;
using ncclnet::host::Optional;

Checker& C() {
  return Checker::instance();
}

// ---- init --------------------------------------------------------------------
ncclResult_t initV6(ncclDebugLogger_t logFn) {
  return C().initOnce(logFn, nullptr);
}
ncclResult_t initV10(ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
  return C().initOnce(logFn, profFn);
}
ncclResult_t initV11(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                     ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
  return C().init(ctx, commId, config, logFn, profFn);
}
ncclResult_t finalize(void* ctx) {
  return C().finalize(ctx);
}
ncclResult_t devices(int* ndev) {
  return C().devices(ndev);
}

template <class Props>
ncclResult_t getPropertiesOld(int dev, Props* props) {
  ncclNetProperties_v12_t v12{};
  ncclResult_t res = C().getProperties(dev, &v12);
  if (res != ncclSuccess) return res;
  const char* why = nullptr;
  return ncclnet::detail::propertiesFromV12(v12, props, &why);
}
ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
  return C().getProperties(dev, props);
}
template <class VProps>
ncclResult_t makeVDevice(int* d, VProps* props) {
  ncclNetVDeviceProps_v12_t v12{};
  ncclResult_t res = ncclnet::detail::vPropsToV12(*props, &v12);
  if (res != ncclSuccess) return res;
  return C().makeVDevice(d, &v12);
}
ncclResult_t setNetAttr(void* ctx, ncclNetAttr_v12_t* attr) {
  return C().setNetAttr(ctx, attr);
}

// ---- connections -------------------------------------------------------------------
ncclResult_t listenV6(int dev, void* handle, void** listenComm) {
  return C().listen(C().processContext(), dev, handle, listenComm);
}
ncclResult_t listenV11(void* ctx, int dev, void* handle, void** listenComm) {
  return C().listen(ctx, dev, handle, listenComm);
}
ncclResult_t connectV6(int dev, void* handle, void** sendComm) {
  return C().connect(C().processContext(), dev, handle, sendComm, nullptr);
}
ncclResult_t connectV7(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v12_t** dc) {
  return C().connect(C().processContext(), dev, handle, sendComm, dc);
}
// The v10 config's traffic class reaches the wrapped plugin through a
// context of that class (net_v10.cc ncclNet_connect hands NCCL's class to
// the plugin with every connect).
ncclResult_t connectV10(int dev, ncclNetCommConfig_v10_t* config, void* handle, void** sendComm,
                        ncclNetDeviceHandle_v12_t** dc) {
  const int trafficClass = config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF;
  void* ctx = C().classContext(trafficClass);
  if (ctx == nullptr && trafficClass != NCCL_NET_TRAFFIC_CLASS_UNDEF) return ncclInternalError;
  return C().connect(ctx, dev, handle, sendComm, dc);
}
ncclResult_t connectV11(void* ctx, int dev, void* handle, void** sendComm,
                        ncclNetDeviceHandle_v12_t** dc) {
  return C().connect(ctx, dev, handle, sendComm, dc);
}
ncclResult_t acceptV6(void* listenComm, void** recvComm) {
  return C().accept(listenComm, recvComm, nullptr);
}
ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** dc) {
  return C().accept(listenComm, recvComm, dc);
}
ncclResult_t closeSend(void* comm) {
  return C().closeSend(comm);
}
ncclResult_t closeRecv(void* comm) {
  return C().closeRecv(comm);
}
ncclResult_t closeListen(void* comm) {
  return C().closeListen(comm);
}

// ---- registration ---------------------------------------------------------------------
// The int sizes of tables v6..v8 are refused where the SDK's export tables
// refuse them, from the same row (abi_versions.hpp): a wrapped plugin sees
// only what NCCL's compat layer would give it.
template <int V>
ncclResult_t regMrInt(void* comm, void* data, int size, int type, void** mhandle) {
  if (const char* why = ncclnet::detail::refuseIntSize(size, kAbi<V>.maxRegMrSize)) {
    return C().refuse("regMr", why);
  }
  return C().regMr(comm, data, static_cast<size_t>(size), type, mhandle);
}
ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  return C().regMr(comm, data, size, type, mhandle);
}
ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                         void** mhandle) {
  return C().regMrDmaBuf(comm, data, size, type, offset, fd, mhandle);
}
ncclResult_t deregMr(void* comm, void* mhandle) {
  return C().deregMr(comm, mhandle);
}
ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr) {
  return C().getDeviceMr(comm, mhandle, dptr);
}

// ---- data ---------------------------------------------------------------------------------
template <int V>
ncclResult_t isendInt(void* comm, void* data, int size, int tag, void* mhandle, void** request) {
  if (const char* why = ncclnet::detail::refuseIntSize(size, kAbi<V>.maxMessageSize)) {
    return C().refuse("isend", why);
  }
  return C().isend(comm, data, static_cast<size_t>(size), tag, mhandle, nullptr, request);
}
ncclResult_t isendV9(void* comm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return C().isend(comm, data, size, tag, mhandle, nullptr, request);
}
ncclResult_t isend(void* comm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                   void** request) {
  return C().isend(comm, data, size, tag, mhandle, phandle, request);
}
template <int V>
ncclResult_t irecvInt(void* comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                      void** request) {
  size_t wide[ncclnet::kMaxGroupedRecvs];
  if (const char* why = ncclnet::detail::widenRecvSizes(kAbi<V>, n, sizes, wide)) {
    return C().refuse("irecv", why);
  }
  return C().irecv(comm, n, data, wide, tags, mhandles, nullptr, request);
}
ncclResult_t irecvV9(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void** request) {
  return C().irecv(comm, n, data, sizes, tags, mhandles, nullptr, request);
}
ncclResult_t irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                   void** phandles, void** request) {
  return C().irecv(comm, n, data, sizes, tags, mhandles, phandles, request);
}
ncclResult_t iflush(void* comm, int n, void** data, int* sizes, void** mhandles, void** request) {
  return C().iflush(comm, n, data, sizes, mhandles, request);
}
ncclResult_t test(void* request, int* done, int* sizes) {
  return C().test(request, done, sizes);
}
ncclResult_t irecvConsumed(void* comm, int n, void* request) {
  return C().irecvConsumed(comm, n, request);
}

// Members every table has, v6 layout and later.
template <class Table>
void fillCommon(Table& t) {
  t.name = C().name();
  t.devices = devices;
  t.regMrDmaBuf = regMrDmaBuf;
  t.deregMr = deregMr;
  t.iflush = iflush;
  t.test = test;
  t.closeSend = closeSend;
  t.closeRecv = closeRecv;
  t.closeListen = closeListen;
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) ncclNet_v6_t ncclNetPlugin_v6{};
__attribute__((visibility("default"))) ncclNet_v7_t ncclNetPlugin_v7{};
__attribute__((visibility("default"))) ncclNet_v8_t ncclNetPlugin_v8{};
__attribute__((visibility("default"))) ncclNet_v9_t ncclNetPlugin_v9{};
__attribute__((visibility("default"))) ncclNet_v10_t ncclNetPlugin_v10{};
__attribute__((visibility("default"))) ncclNet_v11_t ncclNetPlugin_v11{};
__attribute__((visibility("default"))) ncclNet_v12_t ncclNetPlugin_v12{};
}

namespace {

// v7..v12 members shared with v7 (device handles, irecvConsumed).
template <class Table>
void fillV7Family(Table& t) {
  fillCommon(t);
  t.accept = accept;
  t.getDeviceMr = getDeviceMr;
  t.irecvConsumed = irecvConsumed;
}

// Leaves NULL what the wrapped plugin does not provide: NCCL reads a NULL
// optional slot as "not supported" and behaves differently.
template <class Table>
void dropMissing(Table& t) {
  if (!C().provides(Optional::RegMrDmaBuf)) t.regMrDmaBuf = nullptr;
  if constexpr (!std::is_same_v<Table, ncclNet_v6_t>) {
    if (!C().provides(Optional::GetDeviceMr)) t.getDeviceMr = nullptr;
    if (!C().provides(Optional::IrecvConsumed)) t.irecvConsumed = nullptr;
  }
}

void fillTables() {
  ncclNet_v6_t& v6 = ncclNetPlugin_v6;
  fillCommon(v6);
  v6.init = initV6;
  v6.getProperties = getPropertiesOld<ncclNetProperties_v6_t>;
  v6.listen = listenV6;
  v6.connect = connectV6;
  v6.accept = acceptV6;
  v6.regMr = regMrInt<6>;
  v6.isend = isendInt<6>;
  v6.irecv = irecvInt<6>;
  dropMissing(v6);

  ncclNet_v7_t& v7 = ncclNetPlugin_v7;
  fillV7Family(v7);
  v7.init = initV6;
  v7.getProperties = getPropertiesOld<ncclNetProperties_v7_t>;
  v7.listen = listenV6;
  v7.connect = connectV7;
  v7.regMr = regMrInt<7>;
  v7.isend = isendInt<7>;
  v7.irecv = irecvInt<7>;
  dropMissing(v7);

  ncclNet_v8_t& v8 = ncclNetPlugin_v8;
  fillV7Family(v8);
  v8.init = initV6;
  v8.getProperties = getPropertiesOld<ncclNetProperties_v8_t>;
  v8.listen = listenV6;
  v8.connect = connectV7;
  v8.regMr = regMr;
  v8.isend = isendInt<8>;
  v8.irecv = irecvInt<8>;
  dropMissing(v8);

  ncclNet_v9_t& v9 = ncclNetPlugin_v9;
  fillV7Family(v9);
  v9.init = initV6;
  v9.getProperties = getPropertiesOld<ncclNetProperties_v9_t>;
  v9.listen = listenV6;
  v9.connect = connectV7;
  v9.regMr = regMr;
  v9.isend = isendV9;
  v9.irecv = irecvV9;
  v9.makeVDevice =
      C().provides(Optional::MakeVDevice) ? makeVDevice<ncclNetVDeviceProps_v9_t> : nullptr;
  dropMissing(v9);

  ncclNet_v10_t& v10 = ncclNetPlugin_v10;
  fillV7Family(v10);
  v10.init = initV10;
  v10.getProperties = getPropertiesOld<ncclNetProperties_v10_t>;
  v10.listen = listenV6;
  v10.connect = connectV10;
  v10.regMr = regMr;
  v10.isend = isend;
  v10.irecv = irecv;
  v10.makeVDevice =
      C().provides(Optional::MakeVDevice) ? makeVDevice<ncclNetVDeviceProps_v10_t> : nullptr;
  dropMissing(v10);

  ncclNet_v11_t& v11 = ncclNetPlugin_v11;
  fillV7Family(v11);
  v11.init = initV11;
  v11.getProperties = getPropertiesOld<ncclNetProperties_v11_t>;
  v11.listen = listenV11;
  v11.connect = connectV11;
  v11.regMr = regMr;
  v11.isend = isend;
  v11.irecv = irecv;
  v11.makeVDevice =
      C().provides(Optional::MakeVDevice) ? makeVDevice<ncclNetVDeviceProps_v11_t> : nullptr;
  v11.finalize = finalize;
  v11.setNetAttr = C().provides(Optional::SetNetAttr) ? setNetAttr : nullptr;
  dropMissing(v11);

  ncclNet_v12_t& v12 = ncclNetPlugin_v12;
  fillV7Family(v12);
  v12.init = initV11;
  v12.getProperties = getProperties;
  v12.listen = listenV11;
  v12.connect = connectV11;
  v12.regMr = regMr;
  v12.isend = isend;
  v12.irecv = irecv;
  v12.makeVDevice =
      C().provides(Optional::MakeVDevice) ? makeVDevice<ncclNetVDeviceProps_v12_t> : nullptr;
  v12.finalize = finalize;
  v12.setNetAttr = C().provides(Optional::SetNetAttr) ? setNetAttr : nullptr;
  dropMissing(v12);
}

// Runs inside dlopen: loads the wrapped plugin, then names the tables after it.
__attribute__((constructor)) void loadWrappedPlugin() {
  C().load();
  fillTables();
}

}  // namespace
