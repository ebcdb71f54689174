// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: a collComm's way in and out of GPU memory. NCCL's GIN
// proxy registers CUDA memory (every symmetric window, and its signals:
// gin_host_proxy.cc ncclGinProxyCreateContext) and this plugin has neither
// GPUDirect RDMA nor GDRCopy, so every byte to or from the GPU is copied
// through host memory by the driver, on a stream of the plugin's own:
//  - non-blocking, because NCCL's kernels spin on the application's
//    streams for as long as a transfer lasts, and the legacy default
//    stream would wait for them;
//  - a signal is added by a one-thread kernel queued after the payload's
//    copy on the same stream, so it lands after its payload and adds
//    atomically with what the GPU does to the same word (NCCL's device
//    code reads and resets signals with atomics, so the host may not read,
//    add and write it back).
// Every call waits for its own work, up to kWaitMs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ncclnet/cuda_driver.hpp"

namespace ncclnet::socket::rma {

class DeviceLink {
 public:
  // How long one copy or signal may take before the comm fails.
  static constexpr int kWaitMs = 10000;

  DeviceLink() = default;
  ~DeviceLink();
  DeviceLink(const DeviceLink&) = delete;
  DeviceLink& operator=(const DeviceLink&) = delete;

  // Whether this process can register CUDA memory at all (a driver and a
  // device); *why says why not.
  static bool available(std::string* why);

  // Makes the link ready for memory of the device that owns `data` (the
  // first call picks the device; memory of another device is refused).
  // False and *why when it cannot be.
  bool prepare(const void* data, std::string* why);

  // Memory of either type (NCCL_PTR_HOST or NCCL_PTR_CUDA): host memory is
  // moved here, GPU memory through the stream. A signal in GPU memory is
  // added after every copy queued before it.
  bool copy(void* dst, int dstType, const void* src, int srcType, size_t bytes, std::string* why);
  bool add(void* word, int type, uint64_t value, std::string* why);

  // Each waits until its work is done; false and *why on failure.
  bool toHost(void* dst, const void* src, size_t bytes, std::string* why);
  bool toDevice(void* dst, const void* src, size_t bytes, std::string* why);
  bool deviceToDevice(void* dst, const void* src, size_t bytes, std::string* why);
  // Adds `value` to the 8-byte word at `word` (device memory), atomically.
  bool addSignal(void* word, uint64_t value, std::string* why);

 private:
  bool open(int device, std::string* why);
  // Under the lock, in the device's context: queues the work and waits.
  template <class Queue>
  bool run(const char* what, Queue queue, std::string* why);
  bool finish(const char* what, cuda::Result queued, std::string* why);

  std::mutex mutex_;  // one stream, used by the engine and NCCL's threads
  const cuda::Driver* driver_ = nullptr;
  int device_ = -1;     // set once open() succeeded
  std::string broken_;  // why open() failed, if it did
  cuda::PrimaryContextRef primary_;
  cuda::Stream stream_ = nullptr;
  cuda::Module module_ = nullptr;
  cuda::Function signalAdd_ = nullptr;
};

}  // namespace ncclnet::socket::rma
