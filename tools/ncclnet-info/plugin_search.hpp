// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: where a dlopen("libnccl-net-X.so") from NCCL can find a
// plugin, as glibc's dynamic linker searches (ld.so(8), dlopen(3)).
//
// Scanned, in glibc's order: the LD_LIBRARY_PATH directories, the entries of
// /etc/ld.so.cache, then the linker's default directories (as glibc reports
// them through dlinfo(RTLD_DI_SERINFO)). Not scanned: the DT_RPATH of the
// application and of libnccl.so, which glibc searches before all of these
// (an executable's DT_RUNPATH does not apply to a library's dlopen).
#pragma once

#include <string>
#include <vector>

namespace ncclnet::info {

struct FoundFile {
  std::string path;       // where it is
  std::string name;       // the name NCCL would dlopen, e.g. libnccl-net-sdk-ib.so
  std::string origin;     // "LD_LIBRARY_PATH", "ld.so.cache", "default directory"
  bool shadowed = false;  // an earlier place holds the same name: dlopen never reaches this one
};

// The search places, each as "origin: directory" (the cache as one place).
std::vector<std::string> searchPlaces();

// Every libnccl-net.so and libnccl-net-*.so in those places, in search order.
std::vector<FoundFile> findPluginFiles();

// True for the file names NCCL's loader can produce: libnccl-net.so and
// libnccl-net-<suffix>.so.
bool isPluginFileName(const std::string& name);

}  // namespace ncclnet::info
