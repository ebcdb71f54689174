// SPDX-License-Identifier: Apache-2.0
// What the sdk-ib tests load, softverbs and the built plugin: where the
// build put them, or in a copy of the build tree at the same place relative
// to the test executables (sdk/tests/built_file.hpp).
#pragma once

#include <string>

#include "built_file.hpp"

namespace ncclnet::ib::testing {

inline std::string softverbsLibrary() {
  return ::ncclnet::testing::builtFile(SOFTVERBS_LIBRARY, SOFTVERBS_LIBRARY_REL);
}

#ifdef SDK_IB_PLUGIN_PATH
inline std::string sdkIbPlugin() {
  return ::ncclnet::testing::builtFile(SDK_IB_PLUGIN_PATH, SDK_IB_PLUGIN_REL);
}
#endif

}  // namespace ncclnet::ib::testing
