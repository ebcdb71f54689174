// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: which optional members a plugin class offers, so that the
// export tables put an adapter in that slot, or NULL (which NCCL reads as
// "not supported"). A void* class offers the members it names;
// object_adapter.hpp specializes this for a class on the object model.
#pragma once

#include "ncclnet/plugin_contract.hpp"  // names_<optional member>_v

#pragma GCC visibility push(hidden)

namespace ncclnet::detail {

template <class Impl>
struct OffersOptional {
  static constexpr bool regMrDmaBuf = names_regMrDmaBuf_v<Impl>;
  static constexpr bool getDeviceMr = names_getDeviceMr_v<Impl>;
  static constexpr bool irecvConsumed = names_irecvConsumed_v<Impl>;
  static constexpr bool makeVDevice = names_makeVDevice_v<Impl>;
  static constexpr bool setNetAttr = names_setNetAttr_v<Impl>;
};

}  // namespace ncclnet::detail

#pragma GCC visibility pop
