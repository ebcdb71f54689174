// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the versioned tables built from one implementation, and the
// export macro. Each table differs from the next only where the ABI did; the
// adapters it points at live in plugin.hpp (detail::Exports).
#pragma once

#include "ncclnet/abi/net.h"

namespace ncclnet::detail {

template <class Impl>
struct Tables {
  using E = Exports<Impl>;

  static constexpr ncclNet_v6_t v6() {
    return ncclNet_v6_t{
        .name = Impl::kName,
        .init = &E::initV6,
        .devices = &E::devices,
        .getProperties = &E::template getProperties<ncclNetProperties_v6_t>,
        .listen = &E::listenV6,
        .connect = &E::connectV6,
        .accept = &E::acceptV6,
        .regMr = &E::regMrV6,
        .regMrDmaBuf = E::regMrDmaBufSlot(),
        .deregMr = &E::deregMr,
        .isend = &E::isendV6,
        .irecv = &E::irecvV6,
        .iflush = &E::iflush,
        .test = &E::test,
        .closeSend = &E::closeSend,
        .closeRecv = &E::closeRecv,
        .closeListen = &E::closeListen,
    };
  }

  static constexpr ncclNet_v7_t v7() {
    return ncclNet_v7_t{
        .name = Impl::kName,
        .init = &E::initV6,
        .devices = &E::devices,
        .getProperties = &E::template getProperties<ncclNetProperties_v7_t>,
        .listen = &E::listenV6,
        .connect = &E::connectV7,
        .accept = &E::accept,
        .regMr = &E::regMrV6,
        .regMrDmaBuf = E::regMrDmaBufSlot(),
        .deregMr = &E::deregMr,
        .isend = &E::isendV6,
        .irecv = &E::irecvV6,
        .iflush = &E::iflush,
        .test = &E::test,
        .closeSend = &E::closeSend,
        .closeRecv = &E::closeRecv,
        .closeListen = &E::closeListen,
        .getDeviceMr = E::getDeviceMrSlot(),
        .irecvConsumed = E::irecvConsumedSlot(),
    };
  }

  static constexpr ncclNet_v8_t v8() {
    return ncclNet_v8_t{
        .name = Impl::kName,
        .init = &E::initV6,
        .devices = &E::devices,
        .getProperties = &E::template getProperties<ncclNetProperties_v8_t>,
        .listen = &E::listenV6,
        .connect = &E::connectV7,
        .accept = &E::accept,
        .regMr = &E::regMr,
        .regMrDmaBuf = E::regMrDmaBufSlot(),
        .deregMr = &E::deregMr,
        .isend = &E::isendV6,
        .irecv = &E::irecvV6,
        .iflush = &E::iflush,
        .test = &E::test,
        .closeSend = &E::closeSend,
        .closeRecv = &E::closeRecv,
        .closeListen = &E::closeListen,
        .getDeviceMr = E::getDeviceMrSlot(),
        .irecvConsumed = E::irecvConsumedSlot(),
    };
  }

  static constexpr ncclNet_v9_t v9() {
    return ncclNet_v9_t{
        .name = Impl::kName,
        .init = &E::initV6,
        .devices = &E::devices,
        .getProperties = &E::template getProperties<ncclNetProperties_v9_t>,
        .listen = &E::listenV6,
        .connect = &E::connectV7,
        .accept = &E::accept,
        .regMr = &E::regMr,
        .regMrDmaBuf = E::regMrDmaBufSlot(),
        .deregMr = &E::deregMr,
        .isend = &E::isendV9,
        .irecv = &E::irecvV9,
        .iflush = &E::iflush,
        .test = &E::test,
        .closeSend = &E::closeSend,
        .closeRecv = &E::closeRecv,
        .closeListen = &E::closeListen,
        .getDeviceMr = E::getDeviceMrSlot(),
        .irecvConsumed = E::irecvConsumedSlot(),
        .makeVDevice = E::template makeVDeviceSlot<ncclNetVDeviceProps_v9_t>(),
    };
  }

  static constexpr ncclNet_v10_t v10() {
    return ncclNet_v10_t{
        .name = Impl::kName,
        .init = &E::initV10,
        .devices = &E::devices,
        .getProperties = &E::template getProperties<ncclNetProperties_v10_t>,
        .listen = &E::listenV6,
        .connect = &E::connectV10,
        .accept = &E::accept,
        .regMr = &E::regMr,
        .regMrDmaBuf = E::regMrDmaBufSlot(),
        .deregMr = &E::deregMr,
        .isend = &E::isend,
        .irecv = &E::irecv,
        .iflush = &E::iflush,
        .test = &E::test,
        .closeSend = &E::closeSend,
        .closeRecv = &E::closeRecv,
        .closeListen = &E::closeListen,
        .getDeviceMr = E::getDeviceMrSlot(),
        .irecvConsumed = E::irecvConsumedSlot(),
        .makeVDevice = E::template makeVDeviceSlot<ncclNetVDeviceProps_v10_t>(),
    };
  }

  // v11 and v12 have the same functions; they differ in the structs only.
  template <class Net, class Props, class VProps>
  static constexpr Net v11Family() {
    return Net{
        .name = Impl::kName,
        .init = &E::initV11,
        .devices = &E::devices,
        .getProperties = &E::template getProperties<Props>,
        .listen = &E::listenV11,
        .connect = &E::connectV11,
        .accept = &E::accept,
        .regMr = &E::regMr,
        .regMrDmaBuf = E::regMrDmaBufSlot(),
        .deregMr = &E::deregMr,
        .isend = &E::isend,
        .irecv = &E::irecv,
        .iflush = &E::iflush,
        .test = &E::test,
        .closeSend = &E::closeSend,
        .closeRecv = &E::closeRecv,
        .closeListen = &E::closeListen,
        .getDeviceMr = E::getDeviceMrSlot(),
        .irecvConsumed = E::irecvConsumedSlot(),
        .makeVDevice = E::template makeVDeviceSlot<VProps>(),
        .finalize = &E::finalize,
        .setNetAttr = E::setNetAttrSlot(),
    };
  }
  static constexpr ncclNet_v11_t v11() {
    return v11Family<ncclNet_v11_t, ncclNetProperties_v11_t, ncclNetVDeviceProps_v11_t>();
  }
  static constexpr ncclNet_v12_t v12() {
    return v11Family<ncclNet_v12_t, ncclNetProperties_v12_t, ncclNetVDeviceProps_v12_t>();
  }
};

}  // namespace ncclnet::detail

#define NCCLNET_DETAIL_EXPORT_TABLE(Impl, N)                                  \
  extern "C" __attribute__((visibility("default"))) const ncclNet_v##N##_t \
      ncclNetPlugin_v##N = ::ncclnet::detail::Tables<Impl>::v##N();

// Defines ncclNetPlugin_v6 ... ncclNetPlugin_v12 for `Impl`. Use once per
// plugin library, at namespace scope.
#define NCCLNET_EXPORT_PLUGIN(Impl)      \
  NCCLNET_DETAIL_EXPORT_TABLE(Impl, 6)   \
  NCCLNET_DETAIL_EXPORT_TABLE(Impl, 7)   \
  NCCLNET_DETAIL_EXPORT_TABLE(Impl, 8)   \
  NCCLNET_DETAIL_EXPORT_TABLE(Impl, 9)   \
  NCCLNET_DETAIL_EXPORT_TABLE(Impl, 10)  \
  NCCLNET_DETAIL_EXPORT_TABLE(Impl, 11)  \
  NCCLNET_DETAIL_EXPORT_TABLE(Impl, 12)
