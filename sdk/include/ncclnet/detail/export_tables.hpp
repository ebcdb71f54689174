// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the versioned tables built from one implementation. Each
// table differs from the next only where the ABI did; the adapters it points
// at live in plugin.hpp (detail::Exports), the export macro too.
//
// The tables are filled member by member, not with designated initializers:
// those are C++20, and a C++17 consumer building with -Wpedantic would be
// warned about every one of them.
#pragma once

#include "ncclnet/abi/net.h"
#include "ncclnet/plugin.hpp"  // detail::Exports; it includes this file at its end
#include "ncclnet/plugin_contract.hpp"

namespace ncclnet::detail {

template <class Impl, bool = meetsContract_v<Impl>>
struct Tables {
  using E = Exports<Impl>;

  static constexpr ncclNet_v6_t v6() {
    ncclNet_v6_t t{};
    t.name = Impl::kName;
    t.init = &E::initV6;
    t.devices = &E::devices;
    t.getProperties = &E::template getProperties<ncclNetProperties_v6_t>;
    t.listen = &E::listenV6;
    t.connect = &E::connectV6;
    t.accept = &E::acceptV6;
    t.regMr = &E::template regMrInt<6>;
    t.regMrDmaBuf = E::regMrDmaBufSlot();
    t.deregMr = &E::deregMr;
    t.isend = &E::template isendInt<6>;
    t.irecv = &E::template irecvInt<6>;
    t.iflush = &E::iflush;
    t.test = &E::test;
    t.closeSend = &E::closeSend;
    t.closeRecv = &E::closeRecv;
    t.closeListen = &E::closeListen;
    return t;
  }

  static constexpr ncclNet_v7_t v7() {
    ncclNet_v7_t t{};
    t.name = Impl::kName;
    t.init = &E::initV6;
    t.devices = &E::devices;
    t.getProperties = &E::template getProperties<ncclNetProperties_v7_t>;
    t.listen = &E::listenV6;
    t.connect = &E::connectV7;
    t.accept = &E::accept;
    t.regMr = &E::template regMrInt<7>;
    t.regMrDmaBuf = E::regMrDmaBufSlot();
    t.deregMr = &E::deregMr;
    t.isend = &E::template isendInt<7>;
    t.irecv = &E::template irecvInt<7>;
    t.iflush = &E::iflush;
    t.test = &E::test;
    t.closeSend = &E::closeSend;
    t.closeRecv = &E::closeRecv;
    t.closeListen = &E::closeListen;
    t.getDeviceMr = E::getDeviceMrSlot();
    t.irecvConsumed = E::irecvConsumedSlot();
    return t;
  }

  static constexpr ncclNet_v8_t v8() {
    ncclNet_v8_t t{};
    t.name = Impl::kName;
    t.init = &E::initV6;
    t.devices = &E::devices;
    t.getProperties = &E::template getProperties<ncclNetProperties_v8_t>;
    t.listen = &E::listenV6;
    t.connect = &E::connectV7;
    t.accept = &E::accept;
    t.regMr = &E::regMr;
    t.regMrDmaBuf = E::regMrDmaBufSlot();
    t.deregMr = &E::deregMr;
    t.isend = &E::template isendInt<8>;
    t.irecv = &E::template irecvInt<8>;
    t.iflush = &E::iflush;
    t.test = &E::test;
    t.closeSend = &E::closeSend;
    t.closeRecv = &E::closeRecv;
    t.closeListen = &E::closeListen;
    t.getDeviceMr = E::getDeviceMrSlot();
    t.irecvConsumed = E::irecvConsumedSlot();
    return t;
  }

  static constexpr ncclNet_v9_t v9() {
    ncclNet_v9_t t{};
    t.name = Impl::kName;
    t.init = &E::initV6;
    t.devices = &E::devices;
    t.getProperties = &E::template getProperties<ncclNetProperties_v9_t>;
    t.listen = &E::listenV6;
    t.connect = &E::connectV7;
    t.accept = &E::accept;
    t.regMr = &E::regMr;
    t.regMrDmaBuf = E::regMrDmaBufSlot();
    t.deregMr = &E::deregMr;
    t.isend = &E::isendV9;
    t.irecv = &E::irecvV9;
    t.iflush = &E::iflush;
    t.test = &E::test;
    t.closeSend = &E::closeSend;
    t.closeRecv = &E::closeRecv;
    t.closeListen = &E::closeListen;
    t.getDeviceMr = E::getDeviceMrSlot();
    t.irecvConsumed = E::irecvConsumedSlot();
    t.makeVDevice = E::template makeVDeviceSlot<ncclNetVDeviceProps_v9_t>();
    return t;
  }

  static constexpr ncclNet_v10_t v10() {
    ncclNet_v10_t t{};
    t.name = Impl::kName;
    t.init = &E::initV10;
    t.devices = &E::devices;
    t.getProperties = &E::template getProperties<ncclNetProperties_v10_t>;
    t.listen = &E::listenV6;
    t.connect = &E::connectV10;
    t.accept = &E::accept;
    t.regMr = &E::regMr;
    t.regMrDmaBuf = E::regMrDmaBufSlot();
    t.deregMr = &E::deregMr;
    t.isend = &E::isend;
    t.irecv = &E::irecv;
    t.iflush = &E::iflush;
    t.test = &E::test;
    t.closeSend = &E::closeSend;
    t.closeRecv = &E::closeRecv;
    t.closeListen = &E::closeListen;
    t.getDeviceMr = E::getDeviceMrSlot();
    t.irecvConsumed = E::irecvConsumedSlot();
    t.makeVDevice = E::template makeVDeviceSlot<ncclNetVDeviceProps_v10_t>();
    return t;
  }

  // v11 and v12 have the same functions; they differ in the structs only.
  template <class Net, class Props, class VProps>
  static constexpr Net v11Family() {
    Net t{};
    t.name = Impl::kName;
    t.init = &E::initV11;
    t.devices = &E::devices;
    t.getProperties = &E::template getProperties<Props>;
    t.listen = &E::listenV11;
    t.connect = &E::connectV11;
    t.accept = &E::accept;
    t.regMr = &E::regMr;
    t.regMrDmaBuf = E::regMrDmaBufSlot();
    t.deregMr = &E::deregMr;
    t.isend = &E::isend;
    t.irecv = &E::irecv;
    t.iflush = &E::iflush;
    t.test = &E::test;
    t.closeSend = &E::closeSend;
    t.closeRecv = &E::closeRecv;
    t.closeListen = &E::closeListen;
    t.getDeviceMr = E::getDeviceMrSlot();
    t.irecvConsumed = E::irecvConsumedSlot();
    t.makeVDevice = E::template makeVDeviceSlot<VProps>();
    t.finalize = &E::finalize;
    t.setNetAttr = E::setNetAttrSlot();
    return t;
  }
  static constexpr ncclNet_v11_t v11() {
    return v11Family<ncclNet_v11_t, ncclNetProperties_v11_t, ncclNetVDeviceProps_v11_t>();
  }
  static constexpr ncclNet_v12_t v12() {
    return v11Family<ncclNet_v12_t, ncclNetProperties_v12_t, ncclNetVDeviceProps_v12_t>();
  }
};

// A class that fails the contract gets empty tables:
// NCCLNET_CHECK_PLUGIN_CONTRACT has said why, and adapters built on it would
// only add errors from inside the SDK.
template <class Impl>
struct Tables<Impl, false> {
  static constexpr ncclNet_v6_t v6() { return {}; }
  static constexpr ncclNet_v7_t v7() { return {}; }
  static constexpr ncclNet_v8_t v8() { return {}; }
  static constexpr ncclNet_v9_t v9() { return {}; }
  static constexpr ncclNet_v10_t v10() { return {}; }
  static constexpr ncclNet_v11_t v11() { return {}; }
  static constexpr ncclNet_v12_t v12() { return {}; }
};

}  // namespace ncclnet::detail
