// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the shape of the table of ABI version V, slot by slot from
// V's row (abi_versions.hpp). Each `if constexpr` is one change in the ABI's
// history. It is the one place that says which entry-point shape fills which
// slot of which version: the SDK's export tables (export_tables.hpp) and
// ncclnet-check's tables (tools/ncclnet-check/tables.cc) are both built by
// it, from their own entry points E.
//
// E provides one static function per slot shape (initV6, initV10, initV11,
// finalize, devices, getProperties<Props>, listenV6, listenV11, connectV6,
// connectV7, connectV10, connectV11, acceptV6, accept, regMrInt<V>, regMr,
// deregMr, isendInt<V>, isendV9, isend, irecvInt<V>, irecvV9, irecv, iflush,
// test, closeSend, closeRecv, closeListen) and one function per optional
// slot returning the entry point or NULL (regMrDmaBufSlot, getDeviceMrSlot,
// irecvConsumedSlot, makeVDeviceSlot<VProps>, setNetAttrSlot): NCCL reads a
// NULL optional slot as "not supported".
//
// The table is filled member by member, not with designated initializers:
// those are C++20, and a C++17 consumer building with -Wpedantic would be
// warned about every one of them. It is constexpr where E's slot functions
// are (the SDK's const tables), and runs at load time where they are not
// (the checker's, which copy the wrapped plugin's optional slots).
#pragma once

#include "ncclnet/detail/abi_versions.hpp"

namespace ncclnet::detail {

template <int V, class E>
constexpr typename AbiTypes<V>::Net netTable(const char* name) {
  constexpr AbiVersion row = kAbi<V>;
  using Types = AbiTypes<V>;
  typename Types::Net t{};
  t.name = name;
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
  t.getProperties = &E::template getProperties<typename Types::Props>;
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
    t.makeVDevice = E::template makeVDeviceSlot<typename Types::VProps>();
  }
  t.iflush = &E::iflush;
  t.test = &E::test;
  t.closeSend = &E::closeSend;
  t.closeRecv = &E::closeRecv;
  t.closeListen = &E::closeListen;
  return t;
}

}  // namespace ncclnet::detail
