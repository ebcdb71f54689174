// SPDX-License-Identifier: Apache-2.0
// sdk-socket tests: the shared harness.
#include "harness.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace ncclnet::socket::testing {

namespace {
double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
}  // namespace

Session::Session(int version, ncclDebugLogger_t logger) {
  ncclnet::host::LoaderOptions options;
  options.pluginList = SDK_SOCKET_PLUGIN_PATH;
  options.netName = "sdk-socket";
  options.pinnedVersion = version;
  ncclnet::host::Loader loader(options);
  if (loader.load(&plugin_) != ncclSuccess) {
    error_ = "load failed: " + loader.report().outcome;
    return;
  }
  ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  ncclResult_t res =
      plugin_->net().init(&ctx_, 0x5eed, &config, logger, ncclnet::host::profilerCallback());
  if (res != ncclSuccess) {
    error_ = "init failed with " + std::to_string(res);
    return;
  }
  net_ = &plugin_->net();
}

Session::~Session() {
  if (net_ != nullptr) net_->finalize(ctx_);
}

ncclResult_t listenOn(Session& s, char handle[NCCL_NET_HANDLE_MAXSIZE], void** listenComm) {
  std::memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
  return s.net().listen(s.ctx(), 0, handle, listenComm);
}

ncclResult_t connectTo(Session& s, char handle[NCCL_NET_HANDLE_MAXSIZE], void** sendComm,
                       double seconds) {
  auto start = Clock::now();
  *sendComm = nullptr;
  while (*sendComm == nullptr) {
    ncclResult_t res = s.net().connect(s.ctx(), 0, handle, sendComm, nullptr);
    if (res != ncclSuccess) return res;
    if (since(start) > seconds) return ncclInternalError;
  }
  return ncclSuccess;
}

ncclResult_t acceptFrom(Session& s, void* listenComm, void** recvComm, double seconds) {
  auto start = Clock::now();
  *recvComm = nullptr;
  while (*recvComm == nullptr) {
    ncclResult_t res = s.net().accept(listenComm, recvComm, nullptr);
    if (res != ncclSuccess) return res;
    if (since(start) > seconds) return ncclInternalError;
    if (*recvComm == nullptr) std::this_thread::yield();
  }
  return ncclSuccess;
}

ncclResult_t connectPair(Session& s, void** sendComm, void** recvComm) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* listenComm = nullptr;
  ncclResult_t res = listenOn(s, handle, &listenComm);
  if (res != ncclSuccess) return res;
  res = connectTo(s, handle, sendComm);
  if (res == ncclSuccess) res = acceptFrom(s, listenComm, recvComm);
  ncclResult_t closed = s.net().closeListen(listenComm);
  return res != ncclSuccess ? res : closed;
}

ncclResult_t waitFor(Session& s, void* request, int* sizes, double seconds, bool* timedOut) {
  auto start = Clock::now();
  *timedOut = false;
  for (;;) {
    int done = 0;
    ncclResult_t res = s.net().test(request, &done, sizes);
    if (res != ncclSuccess || done) return res;
    if (since(start) > seconds) {
      *timedOut = true;
      return ncclSuccess;
    }
  }
}

void fillPattern(void* data, size_t size, uint64_t seed) {
  auto* p = static_cast<uint8_t*>(data);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(p + i, &x, 8);
  }
  for (; i < size; i++) p[i] = static_cast<uint8_t>(seed + i);
}

long long checkPattern(const void* data, size_t size, uint64_t seed) {
  std::vector<uint8_t> expected(size);
  fillPattern(expected.data(), size, seed);
  const auto* p = static_cast<const uint8_t*>(data);
  if (size == 0 || std::memcmp(p, expected.data(), size) == 0) return -1;
  for (size_t i = 0; i < size; i++) {
    if (p[i] != expected[i]) return static_cast<long long>(i);
  }
  return -1;
}

bool writeAll(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool readAll(int fd, void* data, size_t size, double seconds) {
  auto* p = static_cast<char*>(data);
  auto start = Clock::now();
  while (size > 0) {
    int left = static_cast<int>((seconds - since(start)) * 1000);
    if (left <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, left);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

Child::Child(const std::function<int(int, int)>& body) {
  int down[2], up[2];
  if (pipe(down) != 0) return;
  if (pipe(up) != 0) {
    close(down[0]);
    close(down[1]);
    return;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_ = fork();
  if (pid_ == 0) {
    close(down[1]);
    close(up[0]);
    int status = body(down[0], up[1]);
    std::fflush(stderr);
    _exit(status);  // never back into the test framework
  }
  close(down[0]);
  close(up[1]);
  toChild_ = down[1];
  fromChild_ = up[0];
  if (pid_ < 0) {
    close(toChild_);
    close(fromChild_);
    toChild_ = fromChild_ = -1;
  }
}

Child::~Child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (toChild_ >= 0) close(toChild_);
  if (fromChild_ >= 0) close(fromChild_);
}

int Child::wait(double seconds) {
  auto start = Clock::now();
  while (pid_ > 0) {
    int status = 0;
    pid_t got = waitpid(pid_, &status, WNOHANG);
    if (got == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (since(start) > seconds) {
      kill();
      return -2;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

void Child::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace ncclnet::socket::testing
