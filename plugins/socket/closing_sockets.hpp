// SPDX-License-Identifier: Apache-2.0
// sdk-socket: control sockets of closed send comms, kept until their
// receivers close.
//
// A receiver announces every receive with a clear-to-send, also after the
// sender's last eager send reported done and its comm closed. Data arriving
// at a closed TCP socket makes the kernel reset the connection and drop
// whatever the socket still had to deliver: eager payloads whose sends
// already reported done. So a closing sender shuts down only its writing
// half (the receiver reads every byte, then the end of the stream) and
// parks the socket here; it is closed once the receiver closes its end, or
// after kParkedLimit, or when the plugin instance goes. Then its frames are
// read and dropped first, and for up to kFinalLinger (all sockets together)
// it waits for the receiver to acknowledge the last bytes: a process that
// exits right after its last send loses nothing unless its receiver reads
// nothing for that long and then announces another receive.
#pragma once

#include <chrono>
#include <mutex>
#include <vector>

#include "ncclnet/socket_io.hpp"

namespace ncclnet::socket {

class ClosingSockets {
 public:
  static constexpr std::chrono::seconds kParkedLimit{60};
  static constexpr std::chrono::milliseconds kFinalLinger{2000};

  ClosingSockets() = default;
  ~ClosingSockets();
  ClosingSockets(const ClosingSockets&) = delete;
  ClosingSockets& operator=(const ClosingSockets&) = delete;

  // Shuts down the writing half of `control` and keeps it. From time to
  // time (each time the list doubled) also sweeps.
  void park(Fd control);
  // Closes the parked sockets whose receivers closed (or reset) their end,
  // or that waited kParkedLimit.
  void sweep();
  size_t parked() const;

 private:
  struct Parked {
    Fd fd;
    std::chrono::steady_clock::time_point since;
  };
  void sweepLocked();

  static constexpr size_t kSweepAtLeast = 16;

  mutable std::mutex mutex_;
  std::vector<Parked> parked_;
  size_t afterSweep_ = 0;  // parked sockets the last sweep left
};

}  // namespace ncclnet::socket
