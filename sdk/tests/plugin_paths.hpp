// SPDX-License-Identifier: Apache-2.0
// Where the test plugins were built (set by CMake for every test binary).
#pragma once

#include <cstdlib>
#include <string>

namespace ncclnet::testing {

inline std::string pluginDir() {
  const char* dir = std::getenv("NCCLNET_TEST_PLUGIN_DIR");
  return dir ? dir : NCCLNET_TEST_PLUGIN_DIR;
}

// libnccl-net-<suffix>.so in the test plugin folder.
inline std::string pluginPath(const std::string& suffix) {
  return pluginDir() + "/libnccl-net-" + suffix + ".so";
}

}  // namespace ncclnet::testing
