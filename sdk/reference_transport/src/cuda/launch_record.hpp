// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: the host-mapped memory of
// one CUDA device peer launch — stop word, block table, work descriptors and
// work statuses — and the event that says the kernel finished. Records are
// reused by later launches once their kernel is done and nobody holds them.
//
//   [ stop word | groupStart[capacity + 1] | WorkDesc[capacity] | WorkStatus[capacity] ]
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "kernel_abi.hpp"

namespace ncclnet::transport::cuda_peer {

class LaunchRecord {
 public:
  // Pinned, mapped memory for `capacity` works (on the current device).
  static std::unique_ptr<LaunchRecord> create(int capacity, std::string* why);
  ~LaunchRecord();
  LaunchRecord(const LaunchRecord&) = delete;
  LaunchRecord& operator=(const LaunchRecord&) = delete;

  int capacity() const { return capacity_; }
  cudaEvent_t done() const { return done_; }

  // Host views.
  int32_t* stop() { return reinterpret_cast<int32_t*>(host_); }
  int32_t* groupStart() { return reinterpret_cast<int32_t*>(host_ + groupsAt_); }
  WorkDesc* works() { return reinterpret_cast<WorkDesc*>(host_ + worksAt_); }
  WorkStatus* status() { return reinterpret_cast<WorkStatus*>(host_ + statusAt_); }
  // What the kernel gets: the same memory through the device's mapping.
  LaunchArgs args(uint64_t timeoutNs) const;

  // Resets the stop word and every status for a launch of `works` works.
  void reset(int works);

  // The launch's works by index (for reports), and whether a completion
  // still refers to this record.
  std::vector<WorkDesc> descs;
  bool claimed = false;

 private:
  LaunchRecord() = default;

  int capacity_ = 0;
  char* host_ = nullptr;
  char* device_ = nullptr;
  size_t groupsAt_ = 0, worksAt_ = 0, statusAt_ = 0, bytes_ = 0;
  cudaEvent_t done_ = nullptr;
};

}  // namespace ncclnet::transport::cuda_peer
