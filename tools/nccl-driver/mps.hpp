// SPDX-License-Identifier: Apache-2.0
// An MPS control daemon for the length of a run. Without it, ranks that
// share a GPU time-slice it and the GPU, not the network, bounds every
// transport alike. The daemon gets its own pipe and log folders under /tmp
// (CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY, exported to the
// ranks), and is told to quit when the object goes, whatever happened.
#pragma once

#include <string>

namespace nccldriver {

class MpsDaemon {
 public:
  MpsDaemon() = default;
  ~MpsDaemon() { stop(); }
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // False with `why` set when nvidia-cuda-mps-control is missing or fails.
  bool start(std::string* why);
  void stop();
  bool running() const { return !dir_.empty(); }

 private:
  std::string dir_;
};

}  // namespace nccldriver
