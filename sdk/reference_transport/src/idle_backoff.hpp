// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: how a polling thread (the
// proxy's progress thread, the host device peer) waits when a pass moved
// nothing. It yields first, so a step that is about to be ready is seen at
// once; after a run of empty passes it naps briefly, so that on a machine
// with few cores the plugin's own threads get the CPU the pollers would
// otherwise burn.
#pragma once

#include <chrono>
#include <thread>

namespace ncclnet::transport::detail {

class IdleBackoff {
 public:
  void pass(bool moved) {
    if (moved) {
      idle_ = 0;
      return;
    }
    if (++idle_ < kYields) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kNap);
    }
  }

 private:
  static constexpr int kYields = 64;
  static constexpr std::chrono::microseconds kNap{20};
  int idle_ = 0;
};

}  // namespace ncclnet::transport::detail
