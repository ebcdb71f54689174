// SPDX-License-Identifier: Apache-2.0
// sdk-socket tests: loading the plugin through the SDK host Loader, polling
// its calls with deadlines, and running one side of a test in a forked child.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"

namespace ncclnet::socket::testing {

using Clock = std::chrono::steady_clock;

// The plugin loaded as NCCL would (NCCL_NET_PLUGIN=<path>, NCCL_NET=sdk-socket)
// through ABI `version` (0: the newest it exports), initialized for one
// communicator; `logger` receives the plugin's log lines (NULL: stderr).
class Session {
 public:
  explicit Session(int version = 0, ncclDebugLogger_t logger = nullptr);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool ok() const { return net_ != nullptr; }
  const std::string& error() const { return error_; }
  ncclnet::host::NetView& net() { return *net_; }
  void* ctx() { return ctx_; }
  int version() const { return plugin_ ? plugin_->version() : 0; }

 private:
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin_;
  ncclnet::host::NetView* net_ = nullptr;
  void* ctx_ = nullptr;
  std::string error_;
};

// Polling loops with a deadline, as NCCL's proxy threads poll.
ncclResult_t listenOn(Session& s, char handle[NCCL_NET_HANDLE_MAXSIZE], void** listenComm);
ncclResult_t connectTo(Session& s, char handle[NCCL_NET_HANDLE_MAXSIZE], void** sendComm,
                       double seconds = 10);
ncclResult_t acceptFrom(Session& s, void* listenComm, void** recvComm, double seconds = 10);
// Both ends of one connection in this process (listen, connect, accept,
// close the listen): connect never waits for accept, so one thread does it.
ncclResult_t connectPair(Session& s, void** sendComm, void** recvComm);
// Tests `request` until done; ncclSuccess with *timedOut set when the
// deadline passes first.
ncclResult_t waitFor(Session& s, void* request, int* sizes, double seconds, bool* timedOut);

// Deterministic content for message `seed`.
void fillPattern(void* data, size_t size, uint64_t seed);
// Index of the first byte that differs from the pattern, or -1.
long long checkPattern(const void* data, size_t size, uint64_t seed);

// Bytes over a pipe, with a deadline.
bool writeAll(int fd, const void* data, size_t size);
bool readAll(int fd, void* data, size_t size, double seconds = 20);

// A forked child running `body` (its exit status is body's return value).
// The child never returns into the test framework. The destructor kills and
// reaps a child that is still running, by its pid.
class Child {
 public:
  // toChild/fromChild: the parent's ends of the two pipes.
  explicit Child(const std::function<int(int readFd, int writeFd)>& body);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0; }
  int toChild() const { return toChild_; }
  int fromChild() const { return fromChild_; }
  pid_t pid() const { return pid_; }
  // Waits up to `seconds` for the exit; the exit status, or -1 on a signal,
  // or -2 on timeout (the child is then killed).
  int wait(double seconds = 30);
  void kill();

 private:
  pid_t pid_ = -1;
  int toChild_ = -1;
  int fromChild_ = -1;
};

// In a child: report a failed check on stderr and exit non-zero.
#define CHILD_CHECK(cond)                                                                   \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "child check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::fflush(stderr);                                                                  \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

}  // namespace ncclnet::socket::testing
