// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: a logger callback that records what a plugin (and the
// Loader) say, so the tool can show warnings and the knobs a plugin reports.
#pragma once

#include <string>
#include <vector>

#include "ncclnet/abi/common.h"

namespace ncclnet::info {

struct LogLine {
  ncclDebugLogLevel level = NCCL_LOG_INFO;
  unsigned long flags = 0;
  std::string text;
};

// "WARN", "INFO", ... as NCCL prints them.
const char* logLevelName(ncclDebugLogLevel level);

// The C callback to hand to init() and to the Loader.
ncclDebugLogger_t captureLogger();

// Every line recorded so far, in order; the record is emptied.
std::vector<LogLine> takeCapturedLines();

}  // namespace ncclnet::info
