// SPDX-License-Identifier: Apache-2.0
// Test support for sdk-ofi: runs "roles" (a receiver, a sender) in forked
// child processes, each loading the plugin through the SDK's Loader at a
// pinned ABI version, with a pipe between them for the handle. The gtest
// process itself never loads libfabric, so no provider state crosses fork.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"

namespace ncclnet::ofi::testing {

// NCCL sizes the array it gives test() for this many grouped receives.
constexpr int kMaxSubs = 64;

// A failed expectation inside a role: the text that gtest will print.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#define ROLE_CHECK(cond, ...)                                                            \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      return ::ncclnet::ofi::testing::format("%s:%d: %s: ", __FILE__, __LINE__, #cond) + \
             ::ncclnet::ofi::testing::format(__VA_ARGS__);                               \
    }                                                                                    \
  } while (0)
#define ROLE_OK(call)                                                                            \
  do {                                                                                           \
    ncclResult_t res_ = (call);                                                                  \
    if (res_ != ncclSuccess) {                                                                   \
      return ::ncclnet::ofi::testing::format("%s:%d: %s returned %d", __FILE__, __LINE__, #call, \
                                             static_cast<int>(res_));                            \
    }                                                                                            \
  } while (0)
#define ROLE_TRY(expr)              \
  do {                              \
    std::string err_ = (expr);      \
    if (!err_.empty()) return err_; \
  } while (0)

// Lines the plugin logged in this process.
int countLogged(const std::string& needle);

// The other role, across a pipe pair. Reads wait at most `timeoutMs`.
class Link {
 public:
  Link(int readFd, int writeFd) : readFd_(readFd), writeFd_(writeFd) {}
  bool put(const void* data, size_t size);
  bool get(void* data, size_t size, int timeoutMs = 20000);
  bool signal() {
    char c = 1;
    return put(&c, 1);
  }
  bool wait(int timeoutMs = 20000) {
    char c;
    return get(&c, 1, timeoutMs);
  }

 private:
  int readFd_;
  int writeFd_;
};

// One process's plugin: loaded, initialised, finalised on destruction.
class Peer {
 public:
  ~Peer() { finalize(); }
  std::string open(int version);
  // Releases the plugin (finalize), keeping the library loaded.
  void finalize();
  ncclnet::host::NetView& net() { return *net_; }
  void* ctx() const { return ctx_; }

  // Polls connect (and, when `listenComm` is given, accept) until done.
  std::string connect(void* handle, void** sendComm);
  std::string accept(void* listenComm, void** recvComm);
  std::string connectPair(void* handle, void* listenComm, void** sendComm, void** recvComm);
  // isend/irecv, called again while they answer with a NULL request (the
  // plugin's back-pressure), as NCCL does; fails after 20 s of NULLs.
  std::string isend(void* comm, void* data, size_t size, int tag, void* mhandle, void** request);
  std::string irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                    void** request);
  // Polls test() until done or the deadline; returns test()'s result, or
  // ncclTimeout (as a negative value) when time ran out.
  ncclResult_t wait(void* request, int* sizes, int timeoutMs = 20000);
  // Waits for every request, in any order; the first error wins.
  std::string waitAll(std::vector<void*>& requests, std::vector<std::vector<int>>* sizes,
                      int timeoutMs = 20000);

 private:
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin_;
  ncclnet::host::NetView* net_ = nullptr;
  void* ctx_ = nullptr;
};

using Role = std::function<std::string(Peer&, Link&)>;

// Runs `first` and `second` in two children (`second` alone when `first`
// is null). Returns "" when both succeeded, else what failed; a child
// still running after `timeoutMs` is killed by its pid and reported stuck.
std::string runRoles(int version, const Role& first, const Role& second, int timeoutMs = 30000);

// The byte at `offset` of message `seed`: distinct per message and position.
inline unsigned char pattern(uint64_t seed, size_t offset) {
  return static_cast<unsigned char>((offset * 131 + seed * 29 + (offset >> 8) * 7) & 0xff);
}
void fill(void* data, size_t size, uint64_t seed);
// "" when every byte matches, else where the first mismatch is.
std::string verify(const void* data, size_t size, uint64_t seed);

}  // namespace ncclnet::ofi::testing
