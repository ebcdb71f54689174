// SPDX-License-Identifier: Apache-2.0
// sdk-ib tests: the plugin loaded through the SDK host Loader on the
// software verbs device, polling with deadlines, and a forked peer process.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"

namespace ncclnet::ib::testing {

using Clock = std::chrono::steady_clock;

// The deadline `seconds` from now, for the tests' polling loops.
inline Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Points the plugin at softverbs and the handshake at loopback (unless the
// caller set them), so every test runs without RDMA hardware.
void useSoftverbs();

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  ScopedEnv() = default;
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  void set(const char* name, const std::string& value);

 private:
  struct Saved {
    std::string name;
    bool had;
    std::string value;
  };
  std::vector<Saved> saved_;
};

// Every line the plugin logs in this process, in order (sessions log
// through one logger). A test takes a mark, acts, then reads what came.
struct LogLine {
  ncclDebugLogLevel level;
  std::string text;
};
size_t logMark();
std::vector<LogLine> logSince(size_t mark);
// The WARN lines since `mark`.
std::vector<std::string> warningsSince(size_t mark);

// sdk-ib loaded as NCCL would, pinned to ABI `version`, initialized for one
// communicator.
class Session {
 public:
  explicit Session(int version);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool ok() const { return net_ != nullptr; }
  const std::string& error() const { return error_; }
  ncclnet::host::NetView& net() { return *net_; }
  void* ctx() { return ctx_; }

 private:
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin_;
  ncclnet::host::NetView* net_ = nullptr;
  void* ctx_ = nullptr;
  std::string error_;
};

// Polls until done or `seconds` pass (then ncclTimeout).
ncclResult_t connectTo(Session& s, void* handle, void** sendComm, double seconds = 10);
ncclResult_t acceptFrom(Session& s, void* listenComm, void** recvComm, double seconds = 10);
ncclResult_t waitFor(Session& s, void* request, int* sizes, double seconds = 20);

void fillPattern(void* data, size_t size, uint64_t seed);
bool checkPattern(const void* data, size_t size, uint64_t seed);

bool writeAll(int fd, const void* data, size_t size);
bool readAll(int fd, void* data, size_t size, double seconds = 20);

// A forked peer running `body(readFd, writeFd)`; its return value is the
// exit status. The destructor kills (by pid) and reaps a child still alive.
class Child {
 public:
  explicit Child(const std::function<int(int, int)>& body);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  int toChild() const { return toChild_; }
  int fromChild() const { return fromChild_; }
  // Exit status; -1 killed by a signal; -2 still running after `seconds`.
  int wait(double seconds = 30);
  // kill -9, then reaps it: when this returns, the kernel has closed every
  // socket the child had.
  void killNow();

 private:
  pid_t pid_ = -1;
  int toChild_ = -1;
  int fromChild_ = -1;
};

}  // namespace ncclnet::ib::testing
