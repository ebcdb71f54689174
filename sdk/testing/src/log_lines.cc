// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: the plugin's log lines in a test.
#include "ncclnet/testing/log_lines.hpp"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace ncclnet::testing {

void testLogger(ncclDebugLogLevel level, unsigned long flags, const char* /*file*/, int /*line*/,
                const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string text = ncclnet::host::captureFormatted(level, flags, fmt, args);
  va_end(args);
  if (level == NCCL_LOG_WARN && std::getenv("NCCLNET_TEST_QUIET") == nullptr)
    std::fprintf(stderr, "[pid %d] WARN %s\n", static_cast<int>(::getpid()), text.c_str());
}

size_t logMark() {
  return ncclnet::host::capturedLines().size();
}

std::vector<LogLine> logSince(size_t mark) {
  std::vector<LogLine> lines = ncclnet::host::capturedLines();
  if (mark >= lines.size()) return {};
  return std::vector<LogLine>(lines.begin() + static_cast<std::ptrdiff_t>(mark), lines.end());
}

std::vector<std::string> warningsSince(size_t mark) {
  std::vector<std::string> out;
  for (const LogLine& line : logSince(mark)) {
    if (line.level == NCCL_LOG_WARN) out.push_back(line.text);
  }
  return out;
}

int countLogged(const std::string& needle) {
  int count = 0;
  for (const LogLine& line : ncclnet::host::capturedLines())
    count += line.text.find(needle) != std::string::npos;
  return count;
}

}  // namespace ncclnet::testing
