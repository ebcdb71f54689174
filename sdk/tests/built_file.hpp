// SPDX-License-Identifier: Apache-2.0
// A file a test loads, named by the path the build gave it, found again in
// a copy of the build tree (scripts/gpu/stage.sh stages one for a GPU
// machine): where the build put it, else at the same place relative to the
// running executable, the copy keeping the build's layout.
#pragma once

#include <unistd.h>

#include <string>

namespace ncclnet::testing {

// built: the file's path in the build tree; relative: the same file from
// the folder of the executable that loads it.
inline std::string builtFile(const std::string& built, const std::string& relative) {
  if (access(built.c_str(), R_OK) == 0) return built;
  char exe[4096] = {};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return built;
  std::string dir(exe, static_cast<size_t>(n));
  std::string moved = dir.substr(0, dir.rfind('/')) + "/" + relative;
  return access(moved.c_str(), R_OK) == 0 ? moved : built;
}

}  // namespace ncclnet::testing
