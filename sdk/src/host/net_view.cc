// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host side): the import view of every ABI version the SDK
// knows, one instantiation of ImportedNet (imported_net.hpp) per row.
#include "ncclnet/host/net_view.hpp"

#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/host/imported_net.hpp"

namespace ncclnet::host {

const char* optionalName(Optional op) {
  switch (op) {
    case Optional::RegMrDmaBuf: return "regMrDmaBuf";
    case Optional::GetDeviceMr: return "getDeviceMr";
    case Optional::IrecvConsumed: return "irecvConsumed";
    case Optional::MakeVDevice: return "makeVDevice";
    case Optional::SetNetAttr: return "setNetAttr";
  }
  return "?";
}

namespace {

template <int V>
std::unique_ptr<NetView> make(const void* table, Logger logger) {
  return std::make_unique<ImportedNet<V>>(
      static_cast<const typename detail::AbiTypes<V>::Net*>(table), logger);
}

}  // namespace

std::unique_ptr<NetView> makeNetView(int version, const void* table, Logger logger) {
  if (table == nullptr) return nullptr;
  return detail::withAbiVersion<std::unique_ptr<NetView>>(
      version, [&](auto v) { return make<decltype(v)::value>(table, logger); });
}

}  // namespace ncclnet::host
