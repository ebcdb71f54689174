// SPDX-License-Identifier: Apache-2.0
// What built this host: the SDK release and the source commit, for tools'
// --version and for reports that must be comparable later (provenance).
//
//   std::puts(ncclnet::host::versionLine("ncclnet-info").c_str());
//   // ncclnet-info 0.2.0 (nccl-net-sdk, commit 90fbdbd1c2a3)
#ifndef NCCLNET_HOST_BUILD_INFO_HPP_
#define NCCLNET_HOST_BUILD_INFO_HPP_

#include <string>
#include <string_view>

namespace ncclnet::host {

struct BuildInfo {
  const char* sdkVersion;  // NCCLNET_SDK_VERSION_STRING
  const char* gitCommit;   // short commit, "-dirty" when built from a changed tree, or "unknown"
};

BuildInfo buildInfo();

// "<tool> <version> (nccl-net-sdk, commit <commit>)": the line every tool's
// --version prints.
std::string versionLine(std::string_view tool);

}  // namespace ncclnet::host

#endif  // NCCLNET_HOST_BUILD_INFO_HPP_
