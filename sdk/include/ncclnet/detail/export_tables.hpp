// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the versioned tables built from one implementation, each
// from its version's row of abi_versions.hpp; the adapters they point at
// live in plugin.hpp (detail::Exports), the export macro too.
//
// The tables are filled member by member, not with designated initializers:
// those are C++20, and a C++17 consumer building with -Wpedantic would be
// warned about every one of them.
#pragma once

#include "ncclnet/abi/net.h"
#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/plugin.hpp"  // detail::Exports; it includes this file at its end
#include "ncclnet/plugin_contract.hpp"

namespace ncclnet::detail {

template <class Impl, bool = meetsContract_v<Impl>>
struct Tables {
  using E = Exports<Impl>;

  // The table of version V, slot by slot from V's row (abi_versions.hpp):
  // each `if constexpr` is one change in the ABI's history.
  template <int V>
  static constexpr typename AbiTypes<V>::Net table() {
    constexpr AbiVersion row = kAbi<V>;
    typename AbiTypes<V>::Net t{};
    t.name = Impl::kName;
    if constexpr (row.perCommInit) {
      t.init = &E::initV11;
      t.finalize = &E::finalize;
      t.setNetAttr = E::setNetAttrSlot();
      t.listen = &E::listenV11;
      t.connect = &E::connectV11;
    } else {
      if constexpr (row.profiler) {
        t.init = &E::initV10;
      } else {
        t.init = &E::initV6;
      }
      t.listen = &E::listenV6;
      if constexpr (row.connectConfig) {
        t.connect = &E::connectV10;
      } else if constexpr (row.deviceHandles) {
        t.connect = &E::connectV7;
      } else {
        t.connect = &E::connectV6;
      }
    }
    t.devices = &E::devices;
    t.getProperties = &E::template getProperties<typename AbiTypes<V>::Props>;
    if constexpr (row.deviceHandles) {
      t.accept = &E::accept;
      t.getDeviceMr = E::getDeviceMrSlot();
      t.irecvConsumed = E::irecvConsumedSlot();
    } else {
      t.accept = &E::acceptV6;
    }
    if constexpr (row.intRegMrSize) {
      t.regMr = &E::template regMrInt<V>;
    } else {
      t.regMr = &E::regMr;
    }
    t.regMrDmaBuf = E::regMrDmaBufSlot();
    t.deregMr = &E::deregMr;
    if constexpr (row.intMessageSizes) {
      t.isend = &E::template isendInt<V>;
      t.irecv = &E::template irecvInt<V>;
    } else if constexpr (!row.profiler) {  // v9: size_t, no profiler handles
      t.isend = &E::isendV9;
      t.irecv = &E::irecvV9;
    } else {
      t.isend = &E::isend;
      t.irecv = &E::irecv;
    }
    if constexpr (row.makeVDevice) {
      t.makeVDevice = E::template makeVDeviceSlot<typename AbiTypes<V>::VProps>();
    }
    t.iflush = &E::iflush;
    t.test = &E::test;
    t.closeSend = &E::closeSend;
    t.closeRecv = &E::closeRecv;
    t.closeListen = &E::closeListen;
    return t;
  }
};

// A class that fails the contract gets empty tables:
// NCCLNET_CHECK_PLUGIN_CONTRACT has said why, and adapters built on it would
// only add errors from inside the SDK.
template <class Impl>
struct Tables<Impl, false> {
  template <int V>
  static constexpr typename AbiTypes<V>::Net table() {
    return {};
  }
};

}  // namespace ncclnet::detail
