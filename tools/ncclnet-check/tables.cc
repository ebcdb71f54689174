// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the exported tables ncclNetPlugin_v6 ... _v12, thin shims
// over Checker's v12 calls. Each table is built from its version's row of
// ncclnet/detail/abi_versions.hpp, slot by slot as the SDK's export tables
// are, but not through NCCLNET_EXPORT_PLUGIN: the tables must carry the
// wrapped plugin's name and leave NULL exactly the optional slots the
// wrapped plugin leaves NULL, and neither is known before this library is
// loaded. So the tables are filled once, by the library constructor, before
// dlopen returns.
//
// What this relies on in NCCL (src/plugin/net.cc, NCCL 2.28/2.30):
// ncclNetPluginLoad dlsym()s the tables newest first right after dlopen
// (the v6..v9 shims in src/plugin/net/net_vN.cc copy the name there), and
// ncclNetInit compares NCCL_NET with ncclNet->name (strcasecmp) before it
// calls init. A constructor runs inside dlopen, before both.
#include <cstring>
#include <type_traits>

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

}  // namespace

// One mutable table per version, filled by the constructor below.
#define NCCLNET_CHECK_TABLE(unused, N) \
  __attribute__((visibility("default"))) ncclNet_v##N##_t ncclNetPlugin_v##N{};
extern "C" {
NCCLNET_ABI_FOR_EACH_VERSION(NCCLNET_CHECK_TABLE, ~)
}
#undef NCCLNET_CHECK_TABLE

namespace {

// The table of version V, slot by slot from V's row (abi_versions.hpp), as
// the SDK's own export tables are built; an optional slot the wrapped
// plugin leaves NULL stays NULL: NCCL reads a NULL optional slot as "not
// supported" and behaves differently.
template <int V>
void fill(typename ncclnet::detail::AbiTypes<V>::Net& t) {
  constexpr ncclnet::detail::AbiVersion row = kAbi<V>;
  using Types = ncclnet::detail::AbiTypes<V>;
  t.name = C().name();
  if constexpr (row.perCommInit) {
    t.init = initV11;
    t.finalize = finalize;
    t.setNetAttr = C().provides(Optional::SetNetAttr) ? setNetAttr : nullptr;
    t.listen = listenV11;
    t.connect = connectV11;
  } else {
    if constexpr (row.profiler) {
      t.init = initV10;
    } else {
      t.init = initV6;
    }
    t.listen = listenV6;
    if constexpr (row.connectConfig) {
      t.connect = connectV10;
    } else if constexpr (row.deviceHandles) {
      t.connect = connectV7;
    } else {
      t.connect = connectV6;
    }
  }
  t.devices = devices;
  if constexpr (std::is_same_v<typename Types::Props, ncclNetProperties_v12_t>) {
    t.getProperties = getProperties;
  } else {
    t.getProperties = getPropertiesOld<typename Types::Props>;
  }
  if constexpr (row.deviceHandles) {
    t.accept = accept;
    t.getDeviceMr = C().provides(Optional::GetDeviceMr) ? getDeviceMr : nullptr;
    t.irecvConsumed = C().provides(Optional::IrecvConsumed) ? irecvConsumed : nullptr;
  } else {
    t.accept = acceptV6;
  }
  if constexpr (row.intRegMrSize) {
    t.regMr = regMrInt<V>;
  } else {
    t.regMr = regMr;
  }
  t.regMrDmaBuf = C().provides(Optional::RegMrDmaBuf) ? regMrDmaBuf : nullptr;
  t.deregMr = deregMr;
  if constexpr (row.intMessageSizes) {
    t.isend = isendInt<V>;
    t.irecv = irecvInt<V>;
  } else if constexpr (!row.profiler) {  // v9: size_t, no profiler handles
    t.isend = isendV9;
    t.irecv = irecvV9;
  } else {
    t.isend = isend;
    t.irecv = irecv;
  }
  if constexpr (row.makeVDevice) {
    t.makeVDevice =
        C().provides(Optional::MakeVDevice) ? makeVDevice<typename Types::VProps> : nullptr;
  }
  t.iflush = iflush;
  t.test = test;
  t.closeSend = closeSend;
  t.closeRecv = closeRecv;
  t.closeListen = closeListen;
}

void fillTables() {
#define NCCLNET_CHECK_FILL(unused, N) fill<N>(ncclNetPlugin_v##N);
  NCCLNET_ABI_FOR_EACH_VERSION(NCCLNET_CHECK_FILL, ~)
#undef NCCLNET_CHECK_FILL
}

// Runs inside dlopen: loads the wrapped plugin, then names the tables after it.
__attribute__((constructor)) void loadWrappedPlugin() {
  C().load();
  fillTables();
}

}  // namespace
