// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: what NCCLNET_EXPORT_PLUGIN defines. For a plugin class it
// picks the class the tables drive (the class itself, or its ObjectAdapter
// on the object model), then builds the const table of each version from
// that version's row of abi_versions.hpp, pointing at the entry points of
// exports.hpp.
//
// The tables are filled member by member, not with designated initializers:
// those are C++20, and a C++17 consumer building with -Wpedantic would be
// warned about every one of them.
#pragma once

#include <type_traits>

#include "ncclnet/abi/net.h"
#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/detail/exports.hpp"
#include "ncclnet/detail/object_adapter.hpp"
#include "ncclnet/object_model.hpp"
#include "ncclnet/object_model_contract.hpp"
#include "ncclnet/plugin_contract.hpp"

namespace ncclnet::detail {

// The class the export tables drive for `Impl`.
template <class Impl, bool = usesObjectModel_v<Impl>>
struct ExportedClass {
  using type = Impl;
};
template <class Impl>
struct ExportedClass<Impl, true> {
  // A class that fails its contract is not adapted: it then fails the
  // void* contract too and gets empty tables, so the contract's messages
  // are the only errors.
  using type = std::conditional_t<object::meetsContract_v<Impl>, ObjectAdapter<Impl>, Impl>;
};

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

// One table, ncclNetPlugin_v<N>: C linkage and default visibility, since
// NCCL finds it with dlsym.
#define NCCLNET_DETAIL_EXPORT_TABLE(Impl, N)                                                    \
  extern "C" __attribute__((visibility("default"))) const ncclNet_v##N##_t ncclNetPlugin_v##N = \
      ::ncclnet::detail::Tables<                                                                \
          typename ::ncclnet::detail::ExportedClass<Impl>::type>::template table<N>();
