// SPDX-License-Identifier: Apache-2.0
// Capturing the plugin's log lines in a rank process.
#include "scenario/plugin_log.hpp"

#include <strings.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>

namespace conformance {

namespace {

constexpr size_t kKept = 3;

struct Captured {
  std::mutex mutex;
  std::deque<std::string> warnings;
  bool echo = false;
};

Captured& captured() {
  static Captured* c = [] {
    auto* state = new Captured;  // never destroyed: plugin threads may still log at exit
    const char* level = std::getenv("NCCL_DEBUG");
    state->echo = level && (strcasecmp(level, "INFO") == 0 || strcasecmp(level, "TRACE") == 0);
    return state;
  }();
  return *c;
}

void capture(ncclDebugLogLevel level, unsigned long, const char* file, int line, const char* fmt,
             ...) {
  Captured& c = captured();
  if (level != NCCL_LOG_WARN && !c.echo) return;
  char text[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  if (c.echo)
    std::fprintf(stderr, "%s %s:%d %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", file, line,
                 text);
  if (level != NCCL_LOG_WARN) return;
  std::lock_guard<std::mutex> lock(c.mutex);
  c.warnings.push_back(text);
  if (c.warnings.size() > kKept) c.warnings.pop_front();
}

}  // namespace

ncclDebugLogger_t pluginLogger() {
  return capture;
}

std::string recentPluginWarnings() {
  Captured& c = captured();
  std::lock_guard<std::mutex> lock(c.mutex);
  std::string s;
  for (const std::string& w : c.warnings) s += (s.empty() ? "WARN " : " | WARN ") + w;
  return s;
}

}  // namespace conformance
