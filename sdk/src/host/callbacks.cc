// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host side): the logger and profiler callback a host hands a
// plugin's init.
#include "ncclnet/host/callbacks.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace ncclnet::host {

namespace {

void logToStderr(ncclDebugLogLevel level, unsigned long, const char* file, int line,
                 const char* fmt, ...) {
  static const ncclDebugLogLevel shown = Logger::stderrLevelFromEnv();
  if (level == NCCL_LOG_NONE || level > shown || fmt == nullptr) return;
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  if (level == NCCL_LOG_TRACE && file != nullptr)
    std::fprintf(stderr, "NCCL TRACE %s:%d %s\n", file, line, text);
  else
    std::fprintf(stderr, "NCCL %s %s\n", Logger::levelName(level), text);
}

struct Tally {
  std::atomic<uint64_t> counts[4] = {};
  std::atomic<uint64_t> findings{0};
  std::mutex mutex;  // guards first
  std::string first;
};

Tally& tally() {
  static Tally* t = new Tally;  // never destroyed: plugin threads may report at exit
  return *t;
}

void finding(const std::string& what) {
  Tally& t = tally();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.first.empty()) t.first = what;  // before the count, so a reader sees both
  t.findings++;
}

ncclResult_t profile(void** eHandle, int type, void* pHandle, int64_t pluginId, void*) {
  if (type < ncclProfilerNetEventStart || type > ncclProfilerNetEventUpdateAndStop) {
    finding("profiler event of type " + std::to_string(type) + " (plugin id " +
            std::to_string(pluginId) +
            "): NCCL knows start (0), stop (1), update (2) and updateAndStop (3)");
    return ncclSuccess;
  }
  tally().counts[type]++;
  if (eHandle == nullptr) {
    static const char* names[] = {"start", "stop", "update", "updateAndStop"};
    finding(std::string("profiler ") + names[type] +
            " event with a NULL eHandle: NCCL passes it to the profiler's startEvent or reads "
            "*eHandle");
  }
  if (type == ncclProfilerNetEventStart && pHandle == nullptr) {
    finding("profiler start event with a NULL pHandle: NCCL reads the proxy step through it; "
            "start events belong to isend/irecv calls that were handed a phandle");
  }
  return ncclSuccess;
}

}  // namespace

ncclDebugLogger_t stderrLogger() {
  return logToStderr;
}

ncclDebugLogger_t loggerFunction(const Logger& logger) {
  return logger.function() != nullptr ? logger.function() : stderrLogger();
}

ncclProfilerCallback_t profilerCallback() {
  return profile;
}

ProfilerTally profilerTally() {
  Tally& t = tally();
  ProfilerTally out;
  out.start = t.counts[ncclProfilerNetEventStart].load();
  out.stop = t.counts[ncclProfilerNetEventStop].load();
  out.update = t.counts[ncclProfilerNetEventUpdate].load();
  out.updateAndStop = t.counts[ncclProfilerNetEventUpdateAndStop].load();
  out.findings = t.findings.load();
  std::lock_guard<std::mutex> lock(t.mutex);
  out.firstFinding = t.first;
  return out;
}

}  // namespace ncclnet::host
