// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: logging through NCCL's logger callback, with a stderr
// fallback (honouring NCCL_DEBUG) for hosts that pass no logger.
#pragma once

#include <strings.h>

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "ncclnet/abi/common.h"

namespace ncclnet {

// A small value type: a logger function, a prefix naming the component
// ("NET/sdk-socket"), and the default subsystem flags. Copy it freely.
class Logger {
 public:
  Logger() : Logger(nullptr, "NET") {}
  Logger(ncclDebugLogger_t fn, const char* prefix, unsigned long subsystem = NCCL_NET)
      : fn_(fn), subsystem_(subsystem), stderrLevel_(stderrLevelFromEnv()) {
    std::snprintf(prefix_, sizeof(prefix_), "%s", prefix ? prefix : "NET");
  }

  ncclDebugLogger_t function() const { return fn_; }
  const char* prefix() const { return prefix_; }
  unsigned long subsystem() const { return subsystem_; }

  // True when a message at `level` would be printed. With NCCL's logger
  // NCCL filters, so every level is passed on.
  bool enabled(ncclDebugLogLevel level) const { return fn_ != nullptr || level <= stderrLevel_; }

  void log(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
           const char* fmt, ...) const __attribute__((format(printf, 6, 7))) {
    if (!enabled(level)) return;
    char message[1024];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(message, sizeof(message), fmt, args);
    va_end(args);
    if (flags == 0) flags = subsystem_;
    if (fn_ != nullptr) {
      fn_(level, flags, file, line, "%s %s", prefix_, message);
    } else {
      std::fprintf(stderr, "%s %s %s\n", levelName(level), prefix_, message);
    }
  }

  // Shared with hosts that print plugin logs themselves.
  static const char* levelName(ncclDebugLogLevel level) {
    switch (level) {
      case NCCL_LOG_WARN: return "WARN";
      case NCCL_LOG_INFO: return "INFO";
      case NCCL_LOG_TRACE: return "TRACE";
      case NCCL_LOG_ABORT: return "ABORT";
      case NCCL_LOG_VERSION: return "VERSION";
      default: return "LOG";
    }
  }

  // NCCL_DEBUG as NCCL reads it; WARN when unset or not understood, so a
  // typo never hides warnings.
  static ncclDebugLogLevel stderrLevelFromEnv() {
    const char* value = std::getenv("NCCL_DEBUG");
    if (value == nullptr) return NCCL_LOG_WARN;
    if (strcasecmp(value, "VERSION") == 0) return NCCL_LOG_VERSION;
    if (strcasecmp(value, "INFO") == 0) return NCCL_LOG_INFO;
    if (strcasecmp(value, "TRACE") == 0) return NCCL_LOG_TRACE;
    if (strcasecmp(value, "ABORT") == 0) return NCCL_LOG_ABORT;
    return NCCL_LOG_WARN;
  }

 private:
  ncclDebugLogger_t fn_ = nullptr;
  unsigned long subsystem_ = NCCL_NET;
  ncclDebugLogLevel stderrLevel_ = NCCL_LOG_WARN;
  char prefix_[48] = {};
};

// Rate limit for warnings a peer can trigger at will (stray connections):
// the first `burst` lines of each `window` pass, the rest are counted, and
// the next line that passes says how many were left out. Thread-safe.
class WarnLimit {
 public:
  using Clock = std::chrono::steady_clock;

  // What take() decided: whether to log, and the suffix to append (empty,
  // or " (N similar warnings suppressed)").
  struct Ticket {
    bool pass = false;
    char note[64] = {};
  };

  explicit WarnLimit(int burst = 5, Clock::duration window = std::chrono::seconds(10))
      : burst_(burst), window_(window) {}
  WarnLimit(const WarnLimit&) = delete;
  WarnLimit& operator=(const WarnLimit&) = delete;

  Ticket take(Clock::time_point now = Clock::now()) {
    std::lock_guard<std::mutex> lock(mutex_);
    Ticket t;
    if (passed_ == 0 || now - windowStart_ >= window_) {
      windowStart_ = now;
      passed_ = 0;
    }
    if (passed_ >= burst_) {
      suppressed_++;
      return t;
    }
    passed_++;
    t.pass = true;
    if (suppressed_ > 0) {
      std::snprintf(t.note, sizeof(t.note), " (%llu similar warnings suppressed)",
                    static_cast<unsigned long long>(suppressed_));
      suppressed_ = 0;
    }
    return t;
  }

 private:
  std::mutex mutex_;
  const int burst_;
  const Clock::duration window_;
  Clock::time_point windowStart_{};
  int passed_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace ncclnet

#define NCCLNET_WARN(logger, ...) (logger).log(NCCL_LOG_WARN, 0, __FILE__, __LINE__, __VA_ARGS__)
// A WARN that passes `limit` (a WarnLimit); `fmt` must be a string literal.
#define NCCLNET_WARN_LIMITED(logger, limit, fmt, ...)                             \
  do {                                                                            \
    ncclnet::WarnLimit::Ticket ncclnetTicket_ = (limit).take();                   \
    if (ncclnetTicket_.pass)                                                      \
      (logger).log(NCCL_LOG_WARN, 0, __FILE__, __LINE__, fmt "%s", ##__VA_ARGS__, \
                   ncclnetTicket_.note);                                          \
  } while (0)
#define NCCLNET_INFO(logger, flags, ...) \
  (logger).log(NCCL_LOG_INFO, (flags), __FILE__, __LINE__, __VA_ARGS__)
#define NCCLNET_TRACE(logger, flags, ...) \
  (logger).log(NCCL_LOG_TRACE, (flags), __FILE__, __LINE__, __VA_ARGS__)
