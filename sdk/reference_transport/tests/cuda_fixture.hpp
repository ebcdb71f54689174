// SPDX-License-Identifier: Apache-2.0
// GPU test fixture: skips with the reason when no GPU is usable, and makes
// scenario ranks on CUDA device 0 (CudaMemoryProvider + CudaDevicePeer).
// testnet and loopnet copy with the CPU, so runs over them keep the buffers
// in pinned host memory; loopnet-cuda also copies GPU memory (GPU-direct).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ncclnet/transport/cuda_device_peer.hpp"
#include "scenario.hpp"

namespace ncclnet::transport::testing {

class OnGpu {
 public:
  // Empty when a GPU is usable, else why not.
  static std::string whyNoGpu() {
    std::string why;
    return cudaDeviceCount(&why) > 0 ? std::string() : why;
  }
  static RankMaker ranks(int device = 0) {
    return [device](host::NetView& net, const TransportConfig& config, uint64_t commId, Rank* out,
                    std::string* why) {
      RankOptions options;
      options.transport.config = config;
      options.transport.commId = commId;
      ncclResult_t res = useCudaDevice(device, &options, why);
      if (res != ncclSuccess) return res;
      res = makeRank(net, std::move(options), out);
      if (res != ncclSuccess)
        *why = "makeRank on CUDA device " + std::to_string(device) + " failed";
      return res;
    };
  }
};

#define SKIP_WITHOUT_GPU()                                         \
  do {                                                             \
    std::string whyNoGpu = OnGpu::whyNoGpu();                      \
    if (!whyNoGpu.empty()) GTEST_SKIP() << "no GPU: " << whyNoGpu; \
  } while (0)

}  // namespace ncclnet::transport::testing
