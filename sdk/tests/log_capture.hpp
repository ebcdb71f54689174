// SPDX-License-Identifier: Apache-2.0
// A logger for tests: records every line NCCL's logger callback would get.
// The callback is a plain C function, so the lines go to one process-wide
// list; tests clear it first.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "ncclnet/abi/common.h"

namespace ncclnet::testing {

struct LoggedLine {
  ncclDebugLogLevel level;
  unsigned long flags;
  std::string text;
};

inline std::vector<LoggedLine>& loggedLines() {
  static std::vector<LoggedLine> lines;
  return lines;
}
inline std::mutex& loggedMutex() {
  static std::mutex mutex;
  return mutex;
}

inline void captureLogger(ncclDebugLogLevel level, unsigned long flags, const char*, int,
                          const char* fmt, ...) {
  char text[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(loggedMutex());
  loggedLines().push_back(LoggedLine{level, flags, text});
}

inline void clearLog() {
  std::lock_guard<std::mutex> lock(loggedMutex());
  loggedLines().clear();
}

// Lines at `level` containing `needle`.
inline int countLogged(ncclDebugLogLevel level, const std::string& needle) {
  std::lock_guard<std::mutex> lock(loggedMutex());
  int n = 0;
  for (const LoggedLine& line : loggedLines()) {
    if (line.level == level && line.text.find(needle) != std::string::npos) n++;
  }
  return n;
}

}  // namespace ncclnet::testing
