// SPDX-License-Identifier: Apache-2.0
#include "mps.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace nccldriver {

namespace {

constexpr const char* kControl = "nvidia-cuda-mps-control";

bool onPath(const char* program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    std::string candidate = dirs.substr(start, colon - start) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return true;
    start = colon + 1;
  }
  return false;
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

bool MpsDaemon::start(std::string* why) {
  if (!onPath(kControl)) {
    *why = std::string(kControl) + " is not on PATH";
    return false;
  }
  char dir[] = "/tmp/nccl-driver-mps.XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    *why = "cannot make a folder under /tmp";
    return false;
  }
  std::string pipe = std::string(dir) + "/pipe", log = std::string(dir) + "/log";
  mkdir(pipe.c_str(), 0700);
  mkdir(log.c_str(), 0700);
  setenv("CUDA_MPS_PIPE_DIRECTORY", pipe.c_str(), 1);
  setenv("CUDA_MPS_LOG_DIRECTORY", log.c_str(), 1);
  dir_ = dir;
  int rc = std::system((std::string(kControl) + " -d").c_str());
  if (rc != 0) {
    *why = std::string(kControl) + " -d failed (status " + std::to_string(rc) + "); see " + log;
    dir_.clear();
    return false;
  }
  return true;
}

void MpsDaemon::stop() {
  if (dir_.empty()) return;
  std::string pipe = dir_ + "/pipe";
  // The same pipe folder the daemon was started with (still in our env).
  if (std::FILE* p = popen(kControl, "w")) {
    std::fputs("quit\n", p);
    pclose(p);
  }
  // The daemon removes its control pipe as it goes; wait for that, briefly.
  for (int i = 0; i < 100 && exists(pipe + "/control"); i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
  unsetenv("CUDA_MPS_LOG_DIRECTORY");
  std::fprintf(stderr, "nccl-driver: MPS daemon stopped (logs in %s/log)\n", dir_.c_str());
  dir_.clear();
}

}  // namespace nccldriver
