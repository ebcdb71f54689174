// SPDX-License-Identifier: Apache-2.0
// sdk-ib tests: harness.
#include "harness.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace ncclnet::ib::testing {
namespace {

std::mutex gLogMutex;
std::vector<LogLine> gLog;

// Records every line; prints the WARN ones (unless SDKIB_TEST_QUIET).
void quietLogger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  char text[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  {
    std::lock_guard<std::mutex> lock(gLogMutex);
    gLog.push_back(LogLine{level, text});
  }
  if (level != NCCL_LOG_WARN || std::getenv("SDKIB_TEST_QUIET") != nullptr) return;
  std::fprintf(stderr, "WARN %s\n", text);
}

}  // namespace

void ScopedEnv::set(const char* name, const std::string& value) {
  const char* old = std::getenv(name);
  saved_.push_back({name, old != nullptr, old ? old : ""});
  setenv(name, value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    if (it->had)
      setenv(it->name.c_str(), it->value.c_str(), 1);
    else
      unsetenv(it->name.c_str());
  }
}

size_t logMark() {
  std::lock_guard<std::mutex> lock(gLogMutex);
  return gLog.size();
}

std::vector<LogLine> logSince(size_t mark) {
  std::lock_guard<std::mutex> lock(gLogMutex);
  return std::vector<LogLine>(
      gLog.begin() + static_cast<std::ptrdiff_t>(std::min(mark, gLog.size())), gLog.end());
}

std::vector<std::string> warningsSince(size_t mark) {
  std::vector<std::string> out;
  for (const LogLine& line : logSince(mark)) {
    if (line.level == NCCL_LOG_WARN) out.push_back(line.text);
  }
  return out;
}

void useSoftverbs() {
  setenv("NCCL_IBVERBS_LIB", SOFTVERBS_LIBRARY, 0);
  setenv("NCCL_SOCKET_IFNAME", "lo", 0);
}

Session::Session(int version) {
  useSoftverbs();
  ncclnet::host::LoaderOptions options;
  options.pluginList = SDK_IB_PLUGIN_PATH;
  options.netName = "sdk-ib";
  options.pinnedVersion = version;
  options.checkInit = false;  // a test may expect zero devices
  ncclnet::host::Loader loader(options);
  if (loader.load(&plugin_) != ncclSuccess) {
    error_ = loader.report().outcome;
    return;
  }
  ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  if (plugin_->net().init(&ctx_, 1, &config, quietLogger, ncclnet::host::profilerCallback()) !=
      ncclSuccess) {
    error_ = "init failed";
    return;
  }
  net_ = &plugin_->net();
}

Session::~Session() {
  if (net_ != nullptr) net_->finalize(ctx_);
}

ncclResult_t connectTo(Session& s, void* handle, void** sendComm, double seconds) {
  auto deadline = after(seconds);
  *sendComm = nullptr;
  while (Clock::now() < deadline) {
    ncclResult_t res = s.net().connect(s.ctx(), 0, handle, sendComm, nullptr);
    if (res != ncclSuccess || *sendComm != nullptr) return res;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return ncclTimeout;
}

ncclResult_t acceptFrom(Session& s, void* listenComm, void** recvComm, double seconds) {
  auto deadline = after(seconds);
  *recvComm = nullptr;
  while (Clock::now() < deadline) {
    ncclResult_t res = s.net().accept(listenComm, recvComm, nullptr);
    if (res != ncclSuccess || *recvComm != nullptr) return res;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return ncclTimeout;
}

ncclResult_t waitFor(Session& s, void* request, int* sizes, double seconds) {
  auto deadline = after(seconds);
  while (Clock::now() < deadline) {
    int done = 0;
    ncclResult_t res = s.net().test(request, &done, sizes);
    if (res != ncclSuccess || done) return res;
  }
  return ncclTimeout;
}

void fillPattern(void* data, size_t size, uint64_t seed) {
  auto* p = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < size; i++)
    p[i] = static_cast<unsigned char>((i * 131 + seed * 7 + 3) >> 1);
}

bool checkPattern(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; i++) {
    if (p[i] != static_cast<unsigned char>((i * 131 + seed * 7 + 3) >> 1)) return false;
  }
  return true;
}

bool writeAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool readAll(int fd, void* data, size_t size, double seconds) {
  auto deadline = after(seconds);
  char* p = static_cast<char*>(data);
  while (size > 0) {
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    if (left <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, left) != 1) return false;
    ssize_t n = ::read(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

Child::Child(const std::function<int(int, int)>& body) {
  int down[2];
  int up[2];
  if (::pipe(down) != 0) return;
  if (::pipe(up) != 0) {
    ::close(down[0]);
    ::close(down[1]);
    return;
  }
  pid_ = ::fork();
  if (pid_ == 0) {
    ::close(down[1]);
    ::close(up[0]);
    int status = body(down[0], up[1]);
    ::_exit(status);  // never back into the test framework
  }
  ::close(down[0]);
  ::close(up[1]);
  toChild_ = down[1];
  fromChild_ = up[0];
}

Child::~Child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (toChild_ >= 0) ::close(toChild_);
  if (fromChild_ >= 0) ::close(fromChild_);
}

void Child::killNow() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int Child::wait(double seconds) {
  auto deadline = after(seconds);
  while (pid_ > 0) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (Clock::now() > deadline) return -2;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

}  // namespace ncclnet::ib::testing
