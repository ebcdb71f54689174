// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the per-process call trace.
#include "trace.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <ctime>

#include "ncclnet/abi/net.h"

namespace ncclnet::check {

uint64_t handleHash(const void* handle) {
  const auto* bytes = static_cast<const unsigned char*>(handle);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (int i = 0; i < NCCL_NET_HANDLE_MAXSIZE; i++) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

Trace::~Trace() {
  if (file_ != nullptr) std::fclose(file_);
}

bool Trace::open(const std::string& dir, const std::string& plugin, int abiVersion,
                 std::string* error) {
  char host[256] = "unknown";
  gethostname(host, sizeof(host) - 1);
  path_ = dir + "/ncclnet-check." + host + "." + std::to_string(getpid()) + ".trace";
  std::lock_guard<std::mutex> lock(mutex_);
  file_ = std::fopen(path_.c_str(), "w");
  if (file_ == nullptr) {
    *error = "cannot create " + path_ + ": " + std::strerror(errno);
    return false;
  }
  start_ = std::chrono::steady_clock::now();
  std::fprintf(file_, "# ncclnet-check trace %d host=%s pid=%d plugin=%s abi=%d start=%lld\n",
               kTraceVersion, host, static_cast<int>(getpid()), plugin.c_str(), abiVersion,
               static_cast<long long>(std::time(nullptr)));
  return true;
}

void Trace::line(const char* fmt, ...) {
  if (file_ == nullptr) return;
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                  start_)
                .count();
  std::lock_guard<std::mutex> lock(mutex_);
  std::fprintf(file_, "%lld ", static_cast<long long>(us));
  va_list args;
  va_start(args, fmt);
  std::vfprintf(file_, fmt, args);
  va_end(args);
  std::fputc('\n', file_);
}

void Trace::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ != nullptr) std::fflush(file_);
}

}  // namespace ncclnet::check
