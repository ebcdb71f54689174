// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: one side's view of the two processes of a run. The parent
// drives and measures; the child (the SDK test kit's ChildProcess) serves.
// Both run the same schedule, so the channel between them carries only
// handles and barriers.
#pragma once

#include <cstddef>

#include "ncclnet/testing/channel.hpp"
#include "ncclnet/testing/deadline.hpp"

namespace ncclnet::bench {

using ncclnet::testing::Clock;
using ncclnet::testing::secondsSince;

class Pair {
 public:
  Pair(ncclnet::testing::Channel& channel, bool isChild) : channel_(channel), isChild_(isChild) {}

  bool isChild() const { return isChild_; }
  bool send(const void* data, size_t size) { return channel_.send(data, size); }
  bool recv(void* data, size_t size, double seconds = 60) {
    return channel_.receive(data, size, seconds);
  }
  // Both sides call it; returns when both arrived.
  bool barrier() { return channel_.barrier(); }

 private:
  ncclnet::testing::Channel& channel_;
  bool isChild_;
};

}  // namespace ncclnet::bench
