// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the exported tables ncclNetPlugin_v6 ... _v12, thin shims
// over Checker's v12 calls. Every version's table is built by the SDK's
// ncclnet/detail/net_table.hpp from the version's row of abi_versions.hpp,
// as the SDK's export tables are, and one table is defined per entry of
// NCCLNET_ABI_FOR_EACH_VERSION: nothing here decides, per version, which
// entry point fills which slot. Below are the checker's entry points, one
// per slot shape, not NCCLNET_EXPORT_PLUGIN's: the tables must carry the
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
#include "ncclnet/detail/net_table.hpp"
#include "ncclnet/detail/properties.hpp"
#include "one_sided.hpp"

namespace {

using ncclnet::check::Checker;
using ncclnet::detail::kAbi;
using ncclnet::host::Optional;

Checker& C() {
  return Checker::instance();
}

// One static function per slot shape, as net_table.hpp asks of its E.
struct Entries {
  // ---- init --------------------------------------------------------------------
  static ncclResult_t initV6(ncclDebugLogger_t logFn) { return C().initOnce(logFn, nullptr); }
  static ncclResult_t initV10(ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
    return C().initOnce(logFn, profFn);
  }
  static ncclResult_t initV11(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                              ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
    return C().init(ctx, commId, config, logFn, profFn);
  }
  static ncclResult_t finalize(void* ctx) { return C().finalize(ctx); }
  static ncclResult_t devices(int* ndev) { return C().devices(ndev); }

  template <class Props>
  static ncclResult_t getProperties(int dev, Props* props) {
    if constexpr (std::is_same_v<Props, ncclNetProperties_v12_t>) {
      return C().getProperties(dev, props);
    } else {
      ncclNetProperties_v12_t v12{};
      ncclResult_t res = C().getProperties(dev, &v12);
      if (res != ncclSuccess) return res;
      const char* why = nullptr;
      return ncclnet::detail::propertiesFromV12(v12, props, &why);
    }
  }
  template <class VProps>
  static ncclResult_t makeVDevice(int* d, VProps* props) {
    ncclNetVDeviceProps_v12_t v12{};
    ncclResult_t res = ncclnet::detail::vPropsToV12(*props, &v12);
    if (res != ncclSuccess) return res;
    return C().makeVDevice(d, &v12);
  }
  static ncclResult_t setNetAttr(void* ctx, ncclNetAttr_v12_t* attr) {
    return C().setNetAttr(ctx, attr);
  }

  // ---- connections -------------------------------------------------------------------
  static ncclResult_t listenV6(int dev, void* handle, void** listenComm) {
    return C().listen(C().processContext(), dev, handle, listenComm);
  }
  static ncclResult_t listenV11(void* ctx, int dev, void* handle, void** listenComm) {
    return C().listen(ctx, dev, handle, listenComm);
  }
  static ncclResult_t connectV6(int dev, void* handle, void** sendComm) {
    return C().connect(C().processContext(), dev, handle, sendComm, nullptr);
  }
  static ncclResult_t connectV7(int dev, void* handle, void** sendComm,
                                ncclNetDeviceHandle_v12_t** dc) {
    return C().connect(C().processContext(), dev, handle, sendComm, dc);
  }
  // The v10 config's traffic class reaches the wrapped plugin through a
  // context of that class (net_v10.cc ncclNet_connect hands NCCL's class to
  // the plugin with every connect).
  static ncclResult_t connectV10(int dev, ncclNetCommConfig_v10_t* config, void* handle,
                                 void** sendComm, ncclNetDeviceHandle_v12_t** dc) {
    const int trafficClass = config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF;
    void* ctx = C().classContext(trafficClass);
    if (ctx == nullptr && trafficClass != NCCL_NET_TRAFFIC_CLASS_UNDEF) return ncclInternalError;
    return C().connect(ctx, dev, handle, sendComm, dc);
  }
  static ncclResult_t connectV11(void* ctx, int dev, void* handle, void** sendComm,
                                 ncclNetDeviceHandle_v12_t** dc) {
    return C().connect(ctx, dev, handle, sendComm, dc);
  }
  static ncclResult_t acceptV6(void* listenComm, void** recvComm) {
    return C().accept(listenComm, recvComm, nullptr);
  }
  static ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** dc) {
    return C().accept(listenComm, recvComm, dc);
  }
  static ncclResult_t closeSend(void* comm) { return C().closeSend(comm); }
  static ncclResult_t closeRecv(void* comm) { return C().closeRecv(comm); }
  static ncclResult_t closeListen(void* comm) { return C().closeListen(comm); }

  // ---- registration ---------------------------------------------------------------------
  // The int sizes of tables v6..v8 are refused where the SDK's export tables
  // refuse them, from the same row (abi_versions.hpp): a wrapped plugin sees
  // only what NCCL's compat layer would give it.
  template <int V>
  static ncclResult_t regMrInt(void* comm, void* data, int size, int type, void** mhandle) {
    if (const char* why = ncclnet::detail::refuseIntSize(size, kAbi<V>.maxRegMrSize)) {
      return C().refuse("regMr", why);
    }
    return C().regMr(comm, data, static_cast<size_t>(size), type, mhandle);
  }
  static ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
    return C().regMr(comm, data, size, type, mhandle);
  }
  static ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset,
                                  int fd, void** mhandle) {
    return C().regMrDmaBuf(comm, data, size, type, offset, fd, mhandle);
  }
  static ncclResult_t deregMr(void* comm, void* mhandle) { return C().deregMr(comm, mhandle); }
  static ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr) {
    return C().getDeviceMr(comm, mhandle, dptr);
  }

  // ---- data ---------------------------------------------------------------------------------
  template <int V>
  static ncclResult_t isendInt(void* comm, void* data, int size, int tag, void* mhandle,
                               void** request) {
    if (const char* why = ncclnet::detail::refuseIntSize(size, kAbi<V>.maxMessageSize)) {
      return C().refuse("isend", why);
    }
    return C().isend(comm, data, static_cast<size_t>(size), tag, mhandle, nullptr, request);
  }
  static ncclResult_t isendV9(void* comm, void* data, size_t size, int tag, void* mhandle,
                              void** request) {
    return C().isend(comm, data, size, tag, mhandle, nullptr, request);
  }
  static ncclResult_t isend(void* comm, void* data, size_t size, int tag, void* mhandle,
                            void* phandle, void** request) {
    return C().isend(comm, data, size, tag, mhandle, phandle, request);
  }
  template <int V>
  static ncclResult_t irecvInt(void* comm, int n, void** data, int* sizes, int* tags,
                               void** mhandles, void** request) {
    size_t wide[ncclnet::kMaxGroupedRecvs];
    if (const char* why = ncclnet::detail::widenRecvSizes(kAbi<V>, n, sizes, wide)) {
      return C().refuse("irecv", why);
    }
    return C().irecv(comm, n, data, wide, tags, mhandles, nullptr, request);
  }
  static ncclResult_t irecvV9(void* comm, int n, void** data, size_t* sizes, int* tags,
                              void** mhandles, void** request) {
    return C().irecv(comm, n, data, sizes, tags, mhandles, nullptr, request);
  }
  static ncclResult_t irecv(void* comm, int n, void** data, size_t* sizes, int* tags,
                            void** mhandles, void** phandles, void** request) {
    return C().irecv(comm, n, data, sizes, tags, mhandles, phandles, request);
  }
  static ncclResult_t iflush(void* comm, int n, void** data, int* sizes, void** mhandles,
                             void** request) {
    return C().iflush(comm, n, data, sizes, mhandles, request);
  }
  static ncclResult_t test(void* request, int* done, int* sizes) {
    return C().test(request, done, sizes);
  }
  static ncclResult_t irecvConsumed(void* comm, int n, void* request) {
    return C().irecvConsumed(comm, n, request);
  }

  // ---- optional slots: NULL where the wrapped plugin's are NULL -----------------
  static decltype(ncclNet_v12_t::regMrDmaBuf) regMrDmaBufSlot() {
    return C().provides(Optional::RegMrDmaBuf) ? regMrDmaBuf : nullptr;
  }
  static decltype(ncclNet_v12_t::getDeviceMr) getDeviceMrSlot() {
    return C().provides(Optional::GetDeviceMr) ? getDeviceMr : nullptr;
  }
  static decltype(ncclNet_v12_t::irecvConsumed) irecvConsumedSlot() {
    return C().provides(Optional::IrecvConsumed) ? irecvConsumed : nullptr;
  }
  template <class VProps>
  static ncclResult_t (*makeVDeviceSlot())(int*, VProps*) {
    return C().provides(Optional::MakeVDevice) ? makeVDevice<VProps> : nullptr;
  }
  static decltype(ncclNet_v12_t::setNetAttr) setNetAttrSlot() {
    return C().provides(Optional::SetNetAttr) ? setNetAttr : nullptr;
  }
};

}  // namespace

// One mutable table per version, filled by the constructor below.
#define NCCLNET_CHECK_TABLE(unused, N) \
  __attribute__((visibility("default"))) ncclNet_v##N##_t ncclNetPlugin_v##N{};
extern "C" {
NCCLNET_ABI_FOR_EACH_VERSION(NCCLNET_CHECK_TABLE, ~)
}
#undef NCCLNET_CHECK_TABLE

namespace {

void fillTables() {
#define NCCLNET_CHECK_FILL(unused, N) \
  ncclNetPlugin_v##N = ncclnet::detail::netTable<N, Entries>(C().name());
  NCCLNET_ABI_FOR_EACH_VERSION(NCCLNET_CHECK_FILL, ~)
#undef NCCLNET_CHECK_FILL
}

// Runs inside dlopen: loads the wrapped plugin, then names the tables after
// it and lays the checker's one-sided tables over its own.
__attribute__((constructor)) void loadWrappedPlugin() {
  C().load();
  fillTables();
  ncclnet::check::fillOneSidedTables();
}

}  // namespace
