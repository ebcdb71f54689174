// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: sorts captured log lines into the plugin's own log, the
// knobs an SDK-built plugin reports, and other NCCL_ENV lines.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inspection.hpp"

namespace ncclnet::info {

// The prefix the tool gives the Loader's logger, so its lines can be told
// apart from the plugin's.
constexpr const char* kLoaderLogPrefix = "ncclnet-info/loader";

// Parses one "param NAME=VALUE (default D, from env|default): HELP" line
// (anything may precede "param ", e.g. the plugin's log prefix).
std::optional<Param> parseParamLine(const std::string& text);

// Fills inspection->pluginLog, ->params (one per knob, the last report
// wins: the Loader's check and the inspection both initialize the plugin)
// and ->envLines (NCCL_ENV lines that are not params).
void sortCapturedLines(std::vector<LogLine> lines, Inspection* inspection);

}  // namespace ncclnet::info
