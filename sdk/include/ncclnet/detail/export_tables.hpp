// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: what NCCLNET_EXPORT_PLUGIN defines. For a plugin class it
// picks the class the tables drive (the class itself, or its ObjectAdapter
// on the object model), then builds the const table of each version from
// that version's row of abi_versions.hpp (the slot-by-slot shape is
// net_table.hpp's), pointing at the entry points of exports.hpp.
#pragma once

#include <type_traits>

#include "ncclnet/abi/net.h"
#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/detail/exports.hpp"
#include "ncclnet/detail/net_table.hpp"
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

  // The table of version V: its shape is net_table.hpp's, from V's row.
  template <int V>
  static constexpr typename AbiTypes<V>::Net table() {
    return netTable<V, E>(Impl::kName);
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
