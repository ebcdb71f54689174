// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the capturing logger callback.
#include "log_capture.hpp"

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace ncclnet::info {

namespace {

// ncclDebugLogger_t carries no user pointer, so the record has to live at
// file scope. A mutex rather than thread_local storage: a plugin may log
// from threads of its own, and those lines belong to the same record.
std::mutex gMutex;
std::vector<LogLine> gLines;

void capture(ncclDebugLogLevel level, unsigned long flags, const char* /*file*/, int /*line*/,
             const char* fmt, ...) {
  char text[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(gMutex);
  gLines.push_back(LogLine{level, flags, text});
}

}  // namespace

const char* logLevelName(ncclDebugLogLevel level) {
  switch (level) {
    case NCCL_LOG_VERSION: return "VERSION";
    case NCCL_LOG_WARN: return "WARN";
    case NCCL_LOG_INFO: return "INFO";
    case NCCL_LOG_ABORT: return "ABORT";
    case NCCL_LOG_TRACE: return "TRACE";
    default: return "NONE";
  }
}

ncclDebugLogger_t captureLogger() {
  return &capture;
}

std::vector<LogLine> takeCapturedLines() {
  std::lock_guard<std::mutex> lock(gMutex);
  std::vector<LogLine> lines;
  lines.swap(gLines);
  return lines;
}

}  // namespace ncclnet::info
