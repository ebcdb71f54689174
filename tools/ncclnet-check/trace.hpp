// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the per-process call trace (NCCLNET_CHECK_TRACE=DIR), one
// line per call, no payload. The format is documented in docs/check.md
// ("Trace format"); a replayer reads it with nothing but the lines.
//
//   Trace trace;
//   trace.open("/tmp/traces", "sdk-socket", 12);   // DIR/ncclnet-check.<host>.<pid>.trace
//   trace.line("isend c=%llu r=%llu size=%zu tag=%d m=%llu rc=%d", ...);
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace ncclnet::check {

// The trace's format version (docs/check.md, "Trace format").
constexpr int kTraceVersion = 2;

// A short name for a listen handle (FNV-1a over its NCCL_NET_HANDLE_MAXSIZE
// bytes, which NCCL copies whole from the listener to the connector), so
// that a replayer can pair a `connect` with the `listen` of another process.
uint64_t handleHash(const void* handle);

class Trace {
 public:
  Trace() = default;
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // Creates the file; false (and `error`) when it cannot.
  bool open(const std::string& dir, const std::string& plugin, int abiVersion, std::string* error);
  bool enabled() const { return file_ != nullptr; }
  const std::string& path() const { return path_; }

  // One line: "<microseconds since open> " + the formatted text.
  void line(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  void flush();

 private:
  std::mutex mutex_;  // one writer at a time; taken only when tracing
  std::FILE* file_ = nullptr;
  std::string path_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ncclnet::check
