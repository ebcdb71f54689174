// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host): the capturing logger callback.
#include "ncclnet/host/log_capture.hpp"

#include <cstdarg>
#include <cstdio>
#include <mutex>

#include "ncclnet/log.hpp"

namespace ncclnet::host {

namespace {

struct Record {
  std::mutex mutex;
  std::vector<LogLine> lines;
};

Record& record() {
  // Never destroyed: a plugin's threads may still log while the process exits.
  static Record* r = new Record;
  return *r;
}

}  // namespace

std::string captureFormatted(ncclDebugLogLevel level, unsigned long flags, const char* fmt,
                             va_list args) {
  char text[2048];
  std::vsnprintf(text, sizeof(text), fmt, args);
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.lines.push_back(LogLine{level, flags, text});
  return text;
}

void captureLogger(ncclDebugLogLevel level, unsigned long flags, const char* /*file*/, int /*line*/,
                   const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  captureFormatted(level, flags, fmt, args);
  va_end(args);
}

std::vector<LogLine> capturedLines() {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.lines;
}

std::vector<LogLine> takeCapturedLines() {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<LogLine> lines;
  lines.swap(r.lines);
  return lines;
}

void clearCapturedLines() {
  takeCapturedLines();
}

int countCaptured(ncclDebugLogLevel level, const std::string& needle) {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  int n = 0;
  for (const LogLine& line : r.lines) {
    if (line.level == level && line.text.find(needle) != std::string::npos) n++;
  }
  return n;
}

const char* logLevelName(ncclDebugLogLevel level) {
  return level == NCCL_LOG_NONE ? "NONE" : Logger::levelName(level);
}

}  // namespace ncclnet::host
