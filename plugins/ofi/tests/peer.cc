// SPDX-License-Identifier: Apache-2.0
// Test support for sdk-ofi (see peer.hpp).
#include "peer.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace ncclnet::ofi::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string>& logged() {
  static std::vector<std::string> lines;
  return lines;
}
std::mutex& loggedMutex() {
  static std::mutex mutex;
  return mutex;
}

void logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  char text[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  if (level == NCCL_LOG_WARN) std::fprintf(stderr, "[pid %d] WARN %s\n", getpid(), text);
  std::lock_guard<std::mutex> lock(loggedMutex());
  logged().push_back(text);
}

int elapsedMs(Clock::time_point start) {
  return static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

}  // namespace

std::string format(const char* fmt, ...) {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  return text;
}

int countLogged(const std::string& needle) {
  std::lock_guard<std::mutex> lock(loggedMutex());
  int count = 0;
  for (const std::string& line : logged()) count += line.find(needle) != std::string::npos;
  return count;
}

bool Link::put(const void* data, size_t size) {
  auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(writeFd_, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool Link::get(void* data, size_t size, int timeoutMs) {
  auto* p = static_cast<char*>(data);
  auto start = Clock::now();
  while (size > 0) {
    int left = timeoutMs - elapsedMs(start);
    if (left <= 0) return false;
    pollfd fd{readFd_, POLLIN, 0};
    if (poll(&fd, 1, left) <= 0) continue;
    ssize_t n = read(readFd_, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void Peer::finalize() {
  if (net_ != nullptr) net_->finalize(ctx_);
  net_ = nullptr;
}

std::string Peer::open(int version) {
  // tcp;ofi_rxm on loopback unless the caller chose otherwise.
  setenv("FI_PROVIDER", "tcp;ofi_rxm", 0);
  setenv("FI_TCP_IFACE", "lo", 0);
  setenv("FI_SOCKETS_IFACE", "lo", 0);
  ncclnet::host::LoaderOptions options;
  options.pluginList = SDK_OFI_PLUGIN_PATH;
  options.netName = "";
  options.pinnedVersion = version;
  // No init by the loader: v6..v10 initialise once per process, and the
  // first init decides which logger the plugin keeps (ours, below).
  options.checkInit = false;
  ncclnet::host::Loader loader(options);
  if (loader.load(&plugin_) != ncclSuccess) return "load failed: " + loader.report().outcome;
  net_ = &plugin_->net();
  ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  ncclResult_t res = net_->init(&ctx_, 7, &config, logger, ncclnet::host::profilerCallback());
  if (res != ncclSuccess) {
    net_ = nullptr;
    return format("init returned %d", static_cast<int>(res));
  }
  return "";
}

std::string Peer::connect(void* handle, void** sendComm) {
  *sendComm = nullptr;
  auto start = Clock::now();
  while (*sendComm == nullptr) {
    ncclNetDeviceHandle_v12_t* dev = nullptr;
    ROLE_OK(net_->connect(ctx_, 0, handle, sendComm, &dev));
    ROLE_CHECK(elapsedMs(start) < 20000, "connect did not complete in 20 s");
  }
  return "";
}

std::string Peer::accept(void* listenComm, void** recvComm) {
  *recvComm = nullptr;
  auto start = Clock::now();
  while (*recvComm == nullptr) {
    ncclNetDeviceHandle_v12_t* dev = nullptr;
    ROLE_OK(net_->accept(listenComm, recvComm, &dev));
    ROLE_CHECK(elapsedMs(start) < 20000, "accept did not complete in 20 s");
  }
  return "";
}

std::string Peer::connectPair(void* handle, void* listenComm, void** sendComm, void** recvComm) {
  *sendComm = *recvComm = nullptr;
  auto start = Clock::now();
  while (*sendComm == nullptr || *recvComm == nullptr) {
    ncclNetDeviceHandle_v12_t* dev = nullptr;
    if (*sendComm == nullptr) ROLE_OK(net_->connect(ctx_, 0, handle, sendComm, &dev));
    if (*recvComm == nullptr) ROLE_OK(net_->accept(listenComm, recvComm, &dev));
    ROLE_CHECK(elapsedMs(start) < 20000, "connect/accept did not complete in 20 s");
  }
  return "";
}

std::string Peer::isend(void* comm, void* data, size_t size, int tag, void* mhandle,
                        void** request) {
  *request = nullptr;
  auto start = Clock::now();
  while (*request == nullptr) {
    ROLE_OK(net_->isend(comm, data, size, tag, mhandle, nullptr, request));
    ROLE_CHECK(elapsedMs(start) < 20000, "isend of %zu bytes refused for 20 s", size);
  }
  return "";
}

std::string Peer::irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                        void** request) {
  *request = nullptr;
  auto start = Clock::now();
  while (*request == nullptr) {
    ROLE_OK(net_->irecv(comm, n, data, sizes, tags, mhandles, nullptr, request));
    ROLE_CHECK(elapsedMs(start) < 20000, "irecv of %d buffers refused for 20 s", n);
  }
  return "";
}

ncclResult_t Peer::wait(void* request, int* sizes, int timeoutMs) {
  auto start = Clock::now();
  while (elapsedMs(start) < timeoutMs) {
    int done = 0;
    ncclResult_t res = net_->test(request, &done, sizes);
    if (res != ncclSuccess || done) return res;
  }
  return static_cast<ncclResult_t>(-1);
}

std::string Peer::waitAll(std::vector<void*>& requests, std::vector<std::vector<int>>* sizes,
                          int timeoutMs) {
  if (sizes) sizes->assign(requests.size(), std::vector<int>(kMaxSubs, -1));
  std::vector<bool> done(requests.size(), false);
  size_t left = requests.size();
  auto start = Clock::now();
  while (left > 0) {
    for (size_t i = 0; i < requests.size(); i++) {
      if (done[i]) continue;
      int finished = 0;
      ncclResult_t res = net_->test(requests[i], &finished, sizes ? (*sizes)[i].data() : nullptr);
      if (res != ncclSuccess) return format("test of request %zu returned %d", i, res);
      if (finished) {
        done[i] = true;
        left--;
      }
    }
    ROLE_CHECK(elapsedMs(start) < timeoutMs, "%zu of %zu requests still pending after %d ms", left,
               requests.size(), timeoutMs);
  }
  return "";
}

namespace {

struct Child {
  pid_t pid = -1;
  int resultFd = -1;
};

Child spawn(int version, const Role& role, int readFd, int writeFd, int closeA, int closeB) {
  int result[2];
  if (pipe(result) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    close(result[0]);
    close(closeA);
    close(closeB);
    std::string error;
    {
      Peer peer;
      error = peer.open(version);
      Link link(readFd, writeFd);
      if (error.empty()) error = role(peer, link);
      peer.finalize();
#if defined(__SANITIZE_ADDRESS__)
      // _exit skips LeakSanitizer's exit hook: check here, after finalize
      // and while the library is still loaded (so reports have symbols).
      if (error.empty() && __lsan_do_recoverable_leak_check() != 0) error = "memory leaked";
#endif
    }
    if (write(result[1], error.data(), error.size()) < 0) _exit(3);
    _exit(error.empty() ? 0 : 1);  // no gtest teardown in the child
  }
  close(result[1]);
  return Child{pid, result[0]};
}

std::string collect(Child& child, const char* name, Clock::time_point deadline) {
  if (child.pid < 0) return std::string(name) + ": fork failed";
  int status = 0;
  while (true) {
    pid_t done = waitpid(child.pid, &status, WNOHANG);
    if (done == child.pid) break;
    if (Clock::now() >= deadline) {
      kill(child.pid, SIGKILL);
      waitpid(child.pid, &status, 0);
      close(child.resultFd);
      return std::string(name) + ": stuck (killed at the deadline)";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string text;
  char buffer[512];
  ssize_t n;
  while ((n = read(child.resultFd, buffer, sizeof(buffer))) > 0) text.append(buffer, n);
  close(child.resultFd);
  if (WIFSIGNALED(status)) return format("%s: killed by signal %d", name, WTERMSIG(status));
  if (WEXITSTATUS(status) != 0) return std::string(name) + ": " + (text.empty() ? "failed" : text);
  return "";
}

}  // namespace

std::string runRoles(int version, const Role& first, const Role& second, int timeoutMs) {
  int aToB[2], bToA[2];
  if (pipe(aToB) != 0 || pipe(bToA) != 0) return "pipe failed";
  std::fflush(nullptr);
  Child a, b;
  if (first) a = spawn(version, first, bToA[0], aToB[1], aToB[0], bToA[1]);
  b = spawn(version, second, aToB[0], bToA[1], bToA[0], aToB[1]);
  for (int fd : {aToB[0], aToB[1], bToA[0], bToA[1]}) close(fd);
  auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  std::string errors;
  if (first) errors += collect(a, "first role", deadline);
  std::string second_ = collect(b, first ? "second role" : "role", deadline);
  if (!second_.empty()) errors += (errors.empty() ? "" : "\n") + second_;
  return errors;
}

void fill(void* data, size_t size, uint64_t seed) {
  auto* p = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < size; i++) p[i] = pattern(seed, i);
}

std::string verify(const void* data, size_t size, uint64_t seed) {
  auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; i++) {
    if (p[i] != pattern(seed, i)) {
      return format("byte %zu of %zu (message %llu) is 0x%02x, expected 0x%02x", i, size,
                    static_cast<unsigned long long>(seed), p[i], pattern(seed, i));
    }
  }
  return "";
}

}  // namespace ncclnet::ofi::testing
