// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): a DevicePeer that runs NCCL's kernel
// side of the net protocol on a CPU thread, against host memory.
//
// Send work, per slice (step s, slot s % kSteps):
//   wait head + kSteps >= s + sliceSteps                       (acquire head)
//   shared: buffer = pool + connFifo[slot].offset               (acquire)
//   connFifo[slot].size = encoded bytes
//   SIMPLE: write payload, then tail = s + sliceSteps            (release)
//   LL:     write lines with flag llFlag(s)                      (release per word)
//   LL128:  write lines with flag ll128Flag(s), then tail        (release)
// Recv work, at start head = first step (returns rounded-up credits), then
// per slice:
//   SIMPLE: wait tail >= s + sliceSteps, read buffer (UNPACK connection:
//           first head++, then copy the bounce pages listed in queue slot
//           head % 16 into the buffer, as NCCL's unpack step does)
//   LL/LL128: poll the lines' flags (NCCL's kernels do not wait for tail)
//   check the payload, then head = s + sliceSteps               (release)
// A line whose flags are valid but whose payload is not (a plugin copying
// with a different store order than a NIC) is polled again until the
// proxy's tail passed that step; only then is a mismatch an error.
#pragma once

#include <memory>

#include "ncclnet/log.hpp"
#include "ncclnet/transport/device_peer.hpp"

namespace ncclnet::transport {

class HostDevicePeer final : public DevicePeer {
 public:
  explicit HostDevicePeer(Logger logger = Logger(nullptr, "NET/host-device"));
  ~HostDevicePeer() override;  // stops the thread; unfinished launches fail
  HostDevicePeer(const HostDevicePeer&) = delete;
  HostDevicePeer& operator=(const HostDevicePeer&) = delete;

  ncclResult_t launch(std::vector<DeviceWork> works, std::chrono::milliseconds timeout,
                      std::shared_ptr<DeviceCompletion>* out) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ncclnet::transport
