// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: property values that NCCL rejects, ignores or misreads.
#pragma once

#include <vector>

#include "inspection.hpp"

namespace ncclnet::info {

// One Warning per suspicious value, in device order. Each message says what
// was found and what NCCL expects or does with it. Fields the plugin's ABI
// version lacks hold NCCL's defaults and are not checked.
std::vector<Warning> checkPlugin(const PluginInfo& plugin);

}  // namespace ncclnet::info
