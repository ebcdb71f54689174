// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: fork and pipes.
#include "pair.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <thread>

namespace ncclnet::bench {

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Pair::Pair(const std::function<int(Pair&)>& child) {
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) return;
  std::fflush(stdout);
  std::fflush(stderr);
  pid_ = fork();
  if (pid_ < 0) return;
  if (pid_ == 0) {
    isChild_ = true;
    close(down[1]);
    close(up[0]);
    readFd_ = down[0];
    writeFd_ = up[1];
    ok_ = true;
    int status = child(*this);
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(status);
  }
  close(down[0]);
  close(up[1]);
  readFd_ = up[0];
  writeFd_ = down[1];
  ok_ = true;
}

Pair::~Pair() {
  if (!isChild_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (readFd_ >= 0) close(readFd_);
  if (writeFd_ >= 0) close(writeFd_);
}

bool Pair::send(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(writeFd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool Pair::recv(void* data, size_t size, double seconds) {
  char* p = static_cast<char*>(data);
  auto start = Clock::now();
  while (size > 0) {
    int left = static_cast<int>((seconds - secondsSince(start)) * 1000);
    pollfd pfd{readFd_, POLLIN, 0};
    if (left <= 0 || poll(&pfd, 1, left) <= 0) return false;
    ssize_t n = read(readFd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool Pair::barrier() {
  char token = 'b';
  return send(&token, 1) && recv(&token, 1);
}

int Pair::join(double seconds) {
  auto start = Clock::now();
  while (pid_ > 0 && secondsSince(start) < seconds) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

}  // namespace ncclnet::bench
