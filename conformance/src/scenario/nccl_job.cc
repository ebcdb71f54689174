// SPDX-License-Identifier: Apache-2.0
#include "scenario/nccl_job.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "ncclnet/host/loader.hpp"

namespace conformance {

namespace {

std::string thisExecutableDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, size_t(n));
  return path.substr(0, path.rfind('/'));
}

// The first of `candidates` (relative to this executable's folder) that
// exists, or the variable's value when it is set.
std::string locate(const char* variable, const std::vector<std::string>& candidates) {
  if (const char* v = std::getenv(variable); v != nullptr && v[0] != '\0') return v;
  std::string dir = thisExecutableDir();
  for (const std::string& c : candidates) {
    std::string path = dir + "/" + c;
    if (access(path.c_str(), F_OK) == 0) return path;
  }
  return "";
}

// What `driver --probe` says: "nccl 2.28.9" and "gpus N [why]". Returns
// false when it did not answer.
bool probe(const std::string& driver, std::string* nccl, int* gpus, std::string* why) {
  std::string command = "'" + driver + "' --probe 2>/dev/null";
  std::FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return false;
  char line[512];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (text.rfind("nccl ", 0) == 0) *nccl = text.substr(5);
    if (text.rfind("gpus ", 0) == 0) {
      *gpus = std::atoi(text.c_str() + 5);
      size_t space = text.find(' ', 5);
      if (space != std::string::npos) *why = text.substr(space + 1);
    }
  }
  int status = pclose(p);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 && !nccl->empty();
}

}  // namespace

int NcclJobHost::abiTaken(const std::vector<int>& exported) const {
  int taken = 0;
  for (int v : exported)
    if (v <= newestAbi && v > taken) taken = v;
  return taken;
}

namespace {

NcclJobHost findNcclJobHost() {
  NcclJobHost h;
  // Build tree (conformance/ beside tools/), then an install (bin/, lib/).
  h.driver = locate("NCCLNET_NCCL_DRIVER", {"../tools/nccl-driver/nccl-driver", "nccl-driver"});
  h.checker = locate("NCCLNET_CHECKER", {"../tools/ncclnet-check/libnccl-net-sdk-check.so",
                                         "../lib/libnccl-net-sdk-check.so"});
  if (h.driver.empty()) {
    h.whyNot =
        "nccl-driver is not built here (it needs CUDA and NCCL at build time) and "
        "NCCLNET_NCCL_DRIVER is unset";
    return h;
  }
  int gpus = 0;
  std::string whyNoGpu;
  if (!probe(h.driver, &h.ncclVersion, &gpus, &whyNoGpu)) {
    h.whyNot = h.driver + " --probe failed: is libnccl.so.2 on the library path?";
    return h;
  }
  // The CUDA runtime the job will use, not only a driver library: a
  // stand-in libcuda that satisfies the suite's own loader runs no NCCL.
  if (gpus < 1) {
    h.whyNot = "nccl-driver's CUDA runtime sees no GPU (" + whyNoGpu + ")";
    return h;
  }
  // The ABI window is a property of major.minor; a patch release this SDK
  // has not listed takes the window of its minor release.
  std::string minor = h.ncclVersion.substr(0, h.ncclVersion.rfind('.'));
  int oldest = 0;
  if (!ncclnet::host::abiWindowForNccl(minor, &oldest, &h.newestAbi)) {
    h.whyNot = "NCCL " + h.ncclVersion + " is not a release this SDK knows";
    return h;
  }
  return h;
}

}  // namespace

const NcclJobHost& ncclJobHost() {
  static const NcclJobHost host = findNcclJobHost();
  return host;
}

}  // namespace conformance
