// SPDX-License-Identifier: Apache-2.0
// One device as getProperties left it, as plain data (no JSON here, so that
// what gathers it need not include the JSON library).
#pragma once

#include <optional>
#include <string>

#include "ncclnet/abi/net.h"

namespace ncclnet::json {

// The strings are copies: the plugin's own pointers die with finalize, and a
// report is written after it.
struct DeviceProperties {
  int index = 0;
  ncclResult_t status = ncclSuccess;  // what getProperties returned
  ncclNetProperties_v12_t props{};    // name and pciPath: read the two below
  std::optional<std::string> name;
  std::optional<std::string> pciPath;
};

}  // namespace ncclnet::json
