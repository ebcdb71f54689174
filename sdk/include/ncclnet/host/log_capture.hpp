// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host): a logger callback that records every line a plugin
// (or the Loader) logs, for hosts that show or check them afterwards:
// ncclnet-info's warnings and --params, and tests that assert on log lines.
//
//   net.init(&ctx, 0, &config, ncclnet::host::captureLogger, nullptr);
//   EXPECT_EQ(ncclnet::host::countCaptured(NCCL_LOG_WARN, "NCCL_IB_MTU"), 1);
//
// ncclDebugLogger_t carries no user pointer, so there is one record per
// process, shared by every thread (a plugin logs from threads of its own).
#pragma once

#include <cstdarg>
#include <string>
#include <vector>

#include "ncclnet/abi/common.h"

namespace ncclnet::host {

struct LogLine {
  ncclDebugLogLevel level = NCCL_LOG_INFO;
  unsigned long flags = 0;
  std::string text;
};

// The callback to hand to init() and to the Loader.
void captureLogger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                   const char* fmt, ...) __attribute__((format(printf, 5, 6)));

// What captureLogger does, for a logger that also does something else with
// the line (the test kit's prints WARN lines): records it, returns its text.
std::string captureFormatted(ncclDebugLogLevel level, unsigned long flags, const char* fmt,
                             va_list args);

// Every line recorded so far, in order; take... empties the record.
std::vector<LogLine> capturedLines();
std::vector<LogLine> takeCapturedLines();
void clearCapturedLines();

// Recorded lines at `level` whose text contains `needle`.
int countCaptured(ncclDebugLogLevel level, const std::string& needle);

// "WARN", "INFO", ... as NCCL prints them ("NONE" for NCCL_LOG_NONE).
const char* logLevelName(ncclDebugLogLevel level);

}  // namespace ncclnet::host
