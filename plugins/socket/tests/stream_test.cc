// SPDX-License-Identifier: Apache-2.0
// sdk-socket: a data socket's queue against the thread that drives it.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "stream.hpp"

namespace ncclnet::socketnet {
namespace {

// The driver reports a failed socket through the comm's logger while it
// still drives the stream; the logger below holds it there until the test
// says so (or 5 s pass), which freezes a driver mid-progress on demand.
struct FrozenDriver {
  std::mutex mutex;
  std::condition_variable changed;
  bool driverInside = false;
  bool pushed = false;
  bool pushedWhileInside = false;
};
FrozenDriver* frozen = nullptr;  // the running test's; the logger is a C function

void holdingLogger(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {
  std::unique_lock<std::mutex> lock(frozen->mutex);
  frozen->driverInside = true;
  frozen->changed.notify_all();
  frozen->changed.wait_for(lock, std::chrono::seconds(5), [] { return frozen->pushed; });
  frozen->pushedWhileInside = frozen->pushed;
}

// NCCL's one progress thread queues every comm's stripes. If queueing had
// to wait for a helper that is busy on the socket (copying a 128 KiB stripe
// into the kernel takes tens of microseconds), every comm of the process
// would wait with it: on the GPU host the progress thread spent up to
// 450 us in one isend that way.
TEST(StreamQueue, PushNeverWaitsForTheDriver) {
  FrozenDriver state;
  frozen = &state;
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  Fd mine(fds[0]);
  ::close(fds[1]);  // the peer is gone: the driver's first send fails
  Health health(Logger(holdingLogger, "test"), "stream test");
  Stream stream(std::move(mine), /*sending=*/true, 0, &health);
  std::vector<char> bytes(4096, 'x');
  Pending first, second;
  first.add(1);
  stream.push(bytes.data(), bytes.size(), &first);

  std::thread driver([&] {
    bool moved = false;
    stream.progress(&moved);
  });
  {
    std::unique_lock<std::mutex> lock(state.mutex);
    ASSERT_TRUE(state.changed.wait_for(lock, std::chrono::seconds(5), [&] {
      return state.driverInside;
    })) << "the driver never reported the dead socket";
  }
  second.add(1);
  stream.push(bytes.data(), bytes.size(), &second);  // must not wait for the driver
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.pushed = true;
    state.changed.notify_all();
  }
  driver.join();
  EXPECT_TRUE(state.pushedWhileInside) << "push() waited until the driver had left the stream";
  EXPECT_EQ(health.error(), ncclRemoteError);  // the peer closed its end
  frozen = nullptr;
}

}  // namespace
}  // namespace ncclnet::socketnet
