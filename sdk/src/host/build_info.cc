// SPDX-License-Identifier: Apache-2.0
// The SDK version (version.h) and the commit the build saw (generated).
#include "ncclnet/host/build_info.hpp"

#include "ncclnet/version.h"
#include "ncclnet_build_info.h"

namespace ncclnet::host {

BuildInfo buildInfo() {
  return BuildInfo{NCCLNET_SDK_VERSION_STRING, NCCLNET_GIT_COMMIT};
}

std::string versionLine(std::string_view tool) {
  BuildInfo info = buildInfo();
  std::string line(tool);
  line += ' ';
  line += info.sdkVersion;
  line += " (nccl-net-sdk, commit ";
  line += info.gitCommit;
  line += ')';
  return line;
}

}  // namespace ncclnet::host
