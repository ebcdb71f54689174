// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): a proxy operation (NCCL's
// ncclProxyArgs): one protocol, one direction, one sub-operation per
// connection it moves steps on.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ncclnet/abi/result.h"
#include "ncclnet/transport/constants.hpp"

namespace ncclnet::transport {

class Connection;

struct SubOpSpec {
  Connection* connection = nullptr;
  int nsteps = 0;  // a multiple of sliceSteps (see planSteps)
  // A registered user buffer (Connection::registerBuffer), SIMPLE only:
  // the payload moves straight between it and the network, step k at
  // userBuffer + k * maxNetSize, without the connection's step buffers.
  char* userBuffer = nullptr;  // the proxy's (CPU) address
  size_t userBytes = 0;
  void* userMhandle = nullptr;
};

struct ProxyOpSpec {
  Protocol protocol = Protocol::Simple;
  int sliceSteps = 1;           // steps per network message (2 for ring allreduce SIMPLE)
  int chunkSteps = 1;           // the operation's first step is rounded up to this
  std::vector<SubOpSpec> subs;  // same direction; at most kMaxSubs
};

// Completion of one posted operation.
class OpCompletion {
 public:
  bool done() const;
  // Waits up to `timeout`. ncclTimeout (with `pending` describing every
  // sub's counters) if it did not finish; otherwise the operation's result
  // (an error a plugin call returned, or ncclSuccess).
  ncclResult_t wait(std::chrono::milliseconds timeout, std::string* pending = nullptr) const;

  // Progress-thread side.
  void finish(ncclResult_t result);
  void setPending(std::string pending);

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool done_ = false;
  ncclResult_t result_ = ncclSuccess;
  std::string pending_;
};

}  // namespace ncclnet::transport
