// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the device side of connections —
// what NCCL's kernels do on the other side of head, tail and connFifo.
//
// A launch is one "kernel": a set of works, each moving one operation's
// payload through one connection (produce into a send connection, consume
// from a receive connection). Works on the same connection run in launch
// order; everything else runs concurrently. The host implementation is a
// thread; a CUDA implementation launches kernels over the same
// DeviceConnection addresses, so the proxy code is the same for both.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ncclnet/abi/result.h"
#include "ncclnet/transport/device_connection.hpp"

namespace ncclnet::transport {

enum class DataMode {
  Verify,  // send the pattern of `seed`; check every received byte
  None,    // move sizes and flags only (benchmarks)
};

struct DeviceWork {
  DeviceConnection* connection = nullptr;
  Protocol protocol = Protocol::Simple;
  int sliceSteps = 1;
  int chunkSteps = 1;
  size_t nbytes = 0;
  size_t sliceCapacity = 0;  // Transport::sliceCapacity, identical on both ends
  uint64_t seed = 0;         // sender and receiver use the same
  DataMode mode = DataMode::Verify;
  // A registered user buffer (device address), SIMPLE only: the kernel
  // neither copies into nor out of step buffers. A send writes its payload
  // there (the application's data) and signals each step with connFifo size
  // and tail; a receive signals that the buffer is ready (connFifo size of
  // its first step) and checks it as each tail arrives. sliceCapacity is
  // then the transport's maxNetSize.
  char* userBuffer = nullptr;
};

class DeviceCompletion {
 public:
  virtual ~DeviceCompletion() = default;
  // ncclSuccess, ncclTimeout (with `detail` naming what each work waits
  // for) or ncclSystemError for wrong data (with the first bad byte).
  virtual ncclResult_t wait(std::chrono::milliseconds timeout, std::string* detail) = 0;
};

class DevicePeer {
 public:
  virtual ~DevicePeer() = default;
  // `timeout` bounds every wait inside the kernel: a work that cannot make
  // progress for that long fails.
  virtual ncclResult_t launch(std::vector<DeviceWork> works, std::chrono::milliseconds timeout,
                              std::shared_ptr<DeviceCompletion>* out) = 0;
};

}  // namespace ncclnet::transport
