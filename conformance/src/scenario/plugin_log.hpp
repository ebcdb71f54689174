// SPDX-License-Identifier: Apache-2.0
// The logger a rank hands the plugin (init's logFunction): it keeps the
// plugin's last warnings for the failure message instead of spraying them
// over the progress line; with NCCL_DEBUG=INFO or TRACE it also prints them.
#pragma once

#include <string>

#include "ncclnet/abi/net.h"

namespace conformance {

ncclDebugLogger_t pluginLogger();
// "WARN a | WARN b", the last few, or "".
std::string recentPluginWarnings();

}  // namespace conformance
