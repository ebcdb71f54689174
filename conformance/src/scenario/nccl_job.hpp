// SPDX-License-Identifier: Apache-2.0
// What the Nccl area needs of the host to run real NCCL jobs over the
// plugin under test: nccl-driver (tools/nccl-driver: one process per rank,
// every result checked, proof from NCCL's log that every channel used the
// plugin), the NCCL it links and the newest net ABI that NCCL takes, and
// the checker (libnccl-net-sdk-check.so) that wraps the plugin in the job.
// Found beside this executable, in the build tree or an install;
// NCCLNET_NCCL_DRIVER and NCCLNET_CHECKER name them explicitly.
#pragma once

#include <string>
#include <vector>

namespace conformance {

struct NcclJobHost {
  std::string driver;       // nccl-driver; empty when not found
  std::string checker;      // libnccl-net-sdk-check.so; empty when not found
  std::string ncclVersion;  // "2.28.9", as the driver's NCCL reports it
  int newestAbi = 0;        // the newest ncclNetPlugin_vN that NCCL takes
  std::string whyNot;       // the first missing piece, when one is

  bool usable() const { return whyNot.empty(); }
  // The ABI version NCCL loads from a plugin exporting `exported`: the
  // newest it knows (src/plugin/net.cc tries v11, then older). 0: none.
  int abiTaken(const std::vector<int>& exported) const;
};

// Looks for the pieces and asks the driver which NCCL it runs and whether
// its CUDA runtime sees a GPU. The driver's probe starts a CUDA runtime, so
// it runs once per process: every scenario's requirement asks the same.
const NcclJobHost& ncclJobHost();

}  // namespace conformance
