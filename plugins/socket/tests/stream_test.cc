// SPDX-License-Identifier: Apache-2.0
// sdk-socket: a data socket's queue against the thread that drives it.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "stream.hpp"

namespace ncclnet::socket {
namespace {

// The driver reports a failed socket through the comm's logger while it
// still drives the stream; the logger below holds it there until the test
// says so (or 30 s pass), which freezes a driver mid-progress on demand.
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
  frozen->changed.wait_for(lock, std::chrono::seconds(30), [] { return frozen->pushed; });
  frozen->pushedWhileInside = frozen->pushed;
}

constexpr auto kBound = std::chrono::seconds(30);

// A stream on one end of a socketpair; the test plays the peer on the other.
struct StreamOnSocketpair {
  Health health{Logger(nullptr, "test"), "stream test"};
  Fd peer;
  std::unique_ptr<Stream> stream;

  explicit StreamOnSocketpair(bool sending) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
    peer = Fd(fds[1]);
    stream = std::make_unique<Stream>(Fd(fds[0]), sending, 0, &health);
  }
};

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
  bool inside = false;
  {
    std::unique_lock<std::mutex> lock(state.mutex);
    inside = state.changed.wait_for(lock, kBound, [&] { return state.driverInside; });
  }
  if (inside) {
    second.add(1);
    stream.push(bytes.data(), bytes.size(), &second);  // must not wait for the driver
  }
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.pushed = true;
    state.changed.notify_all();
  }
  driver.join();
  frozen = nullptr;
  ASSERT_TRUE(inside) << "the driver never reported the dead socket";
  EXPECT_TRUE(state.pushedWhileInside) << "push() waited until the driver had left the stream";
  EXPECT_EQ(health.error(), ncclRemoteError);  // the peer closed its end
}

// Tasks queued while the driver is sending leave in queue order, whole, and
// each tells its request once (ThreadSanitizer builds check the two locks).
TEST(StreamQueue, TasksQueuedWhileTheDriverSendsArriveInOrder) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  int small = 4096;  // a small buffer: the driver stalls and resumes often
  setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
  Fd mine(fds[0]), peer(fds[1]);
  Health health(Logger(nullptr, "test"), "stream test");
  Stream stream(std::move(mine), /*sending=*/true, 0, &health);

  constexpr int kTasks = 200;
  std::vector<std::vector<char>> payloads(kTasks);
  std::vector<char> expected;
  for (int i = 0; i < kTasks; i++) {
    payloads[i].assign(1 + (i * 7919) % (48 << 10), static_cast<char>(i));
    expected.insert(expected.end(), payloads[i].begin(), payloads[i].end());
  }
  std::vector<Pending> pending(kTasks);
  std::atomic<bool> stop{false};
  auto deadline = std::chrono::steady_clock::now() + kBound;

  std::vector<char> received;
  std::thread reader([&] {
    std::vector<char> chunk(64 << 10);
    while (received.size() < expected.size() && std::chrono::steady_clock::now() < deadline) {
      ssize_t n = ::recv(peer.get(), chunk.data(), chunk.size(), MSG_DONTWAIT);
      if (n > 0) received.insert(received.end(), chunk.data(), chunk.data() + n);
      if (n <= 0) std::this_thread::yield();
    }
  });
  std::thread driver([&] {
    while (!stop.load() && std::chrono::steady_clock::now() < deadline) {
      bool moved = false;
      stream.progress(&moved);
    }
  });
  for (int i = 0; i < kTasks; i++) {
    pending[i].add(1);
    stream.push(payloads[i].data(), payloads[i].size(), &pending[i]);
  }
  reader.join();
  stop.store(true);
  driver.join();
  ASSERT_TRUE(health.ok());
  ASSERT_EQ(received.size(), expected.size()) << "transfer did not finish within 30 s";
  EXPECT_TRUE(received == expected) << "bytes out of order or changed";
  for (int i = 0; i < kTasks; i++) EXPECT_TRUE(pending[i].drained()) << "task " << i;
}

// Once the comm failed (on any socket), a stream moves nothing more: test()
// has reported the error for every request, so NCCL may free their buffers.
TEST(StreamQueue, NothingMovesOnceTheCommFailed) {
  StreamOnSocketpair pair(/*sending=*/true);
  ASSERT_NE(pair.stream, nullptr);
  Stream& stream = *pair.stream;
  pair.health.fail(Failure::kPeerGone, "another data socket of the comm was closed");
  std::vector<char> bytes(4096, 'x');
  Pending p;
  p.add(1);
  stream.push(bytes.data(), bytes.size(), &p);
  bool moved = false;
  EXPECT_EQ(stream.progress(&moved), Stream::State::Idle);
  EXPECT_FALSE(moved);
  char c;
  EXPECT_EQ(::recv(pair.peer.get(), &c, 1, MSG_DONTWAIT), -1) << "a byte left after the failure";
  EXPECT_FALSE(p.drained());  // the request reports the comm's error instead
}

// Waits (up to `within`) until the helper has gone to sleep `count` times.
bool sleptAtLeast(const Worker& worker, unsigned long count,
                  std::chrono::milliseconds within = kBound) {
  auto deadline = std::chrono::steady_clock::now() + within;
  while (worker.sleeps() < count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return worker.sleeps() >= count;
}

using std::chrono::milliseconds;
using std::chrono::seconds;

// NCCL's rule for its socket threads: a helper with nothing queued sleeps at
// once (no CPU between messages); one whose stripe stalled keeps retrying,
// since its bytes are on the way, and sleeps only after its patience, then
// wakes when the socket has them.
TEST(HelperPatience, IdleHelpersSleepStalledOnesRetryFirst) {
  StreamOnSocketpair pair(/*sending=*/false);
  ASSERT_NE(pair.stream, nullptr);
  Stream& stream = *pair.stream;
  HelperCensus census(1024);
  Worker worker({&stream}, Patience{seconds(1), milliseconds(0)}, &census, &pair.health);
  // Well before the 1 s a stalled helper would wait.
  ASSERT_TRUE(sleptAtLeast(worker, 1, milliseconds(500))) << "an idle helper did not sleep at once";

  std::vector<char> buffer(1024, 0);
  Pending pending;
  pending.add(1);
  stream.push(buffer.data(), buffer.size(), &pending);
  worker.wake();  // nothing to read yet: the stripe stalls
  // Counted once the helper is retrying (a sleeping helper also counts a
  // sleep each time its poll() bound of 500 ms passes).
  std::this_thread::sleep_for(milliseconds(20));
  unsigned long before = worker.sleeps();
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(worker.sleeps(), before) << "a stalled helper slept before its 1 s of retrying";
  ASSERT_TRUE(sleptAtLeast(worker, before + 1)) << "a stalled helper retried past its patience";

  std::vector<char> bytes(buffer.size(), 'y');
  ASSERT_EQ(::send(pair.peer.get(), bytes.data(), bytes.size(), 0), ssize_t(bytes.size()));
  auto deadline = std::chrono::steady_clock::now() + kBound;
  while (!pending.drained() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_TRUE(pending.drained()) << "the sleeping helper missed the bytes";
  EXPECT_TRUE(buffer == bytes);
  EXPECT_TRUE(pair.health.ok());
}

// NCCLNET_SOCKET_IDLE_SPIN_US: an idle helper may look for work a while.
TEST(HelperPatience, IdlePatienceKeepsAHelperAwake) {
  Health health(Logger(nullptr, "test"), "patience test");
  HelperCensus census(1024);
  Worker worker({}, Patience{milliseconds(0), seconds(2)}, &census, &health);
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(worker.sleeps(), 0u) << "slept before its 2 s of idle patience";
  ASSERT_TRUE(sleptAtLeast(worker, 1)) << "an idle helper never slept";
  // Once asleep with nothing to do, it stays asleep: when poll()'s 500 ms
  // bound passes it sleeps again at once, where another 2 s of looking for
  // work would put the next sleep 2.5 s away.
  EXPECT_TRUE(sleptAtLeast(worker, 2, milliseconds(1500)))
      << "a helper whose sleep ran out retried its idle patience again";
}

// More helpers than cores: nobody retries, however patient, since retrying
// helpers would take the cores NCCL's progress threads need.
TEST(HelperPatience, CrowdedHelpersSleepAtOnce) {
  StreamOnSocketpair pair(/*sending=*/false);
  ASSERT_NE(pair.stream, nullptr);
  Stream& stream = *pair.stream;
  HelperCensus census(0);  // one helper is already more than the cores
  Worker worker({&stream}, Patience{seconds(60), seconds(60)}, &census, &pair.health);
  ASSERT_TRUE(sleptAtLeast(worker, 1, milliseconds(5000))) << "a crowded idle helper kept retrying";
  std::vector<char> buffer(16);
  Pending pending;
  pending.add(1);
  stream.push(buffer.data(), buffer.size(), &pending);
  worker.wake();
  std::this_thread::sleep_for(milliseconds(20));  // the stripe has stalled
  unsigned long before = worker.sleeps();
  // A retrying helper would not sleep for 60 s.
  EXPECT_TRUE(sleptAtLeast(worker, before + 1, milliseconds(5000)))
      << "a crowded stalled helper kept retrying";
}

// A machine with more runnable threads than its threshold (here any: /proc/
// loadavg counts at least its reader, against 0 CPUs) stops a helper from
// retrying even when its own process has few helpers: other ranks'
// processes need those cores.
TEST(HelperPatience, HelpersSleepAtOnceOnABusyMachine) {
  if (access("/proc/loadavg", R_OK) != 0) GTEST_SKIP() << "no /proc/loadavg on this system";
  StreamOnSocketpair pair(/*sending=*/false);
  ASSERT_NE(pair.stream, nullptr);
  Stream& stream = *pair.stream;
  HelperCensus census(1024, std::make_unique<MachineLoad>("/proc/loadavg", 0));
  Worker worker({&stream}, Patience{seconds(60), seconds(60)}, &census, &pair.health);
  ASSERT_TRUE(sleptAtLeast(worker, 1, milliseconds(5000))) << "an idle helper kept retrying";
  std::vector<char> buffer(16);
  Pending pending;
  pending.add(1);
  stream.push(buffer.data(), buffer.size(), &pending);
  worker.wake();
  std::this_thread::sleep_for(milliseconds(20));  // the stripe has stalled
  unsigned long before = worker.sleeps();
  // A retrying helper would not sleep for 60 s.
  EXPECT_TRUE(sleptAtLeast(worker, before + 1, milliseconds(5000)))
      << "a stalled helper kept retrying on a busy machine";

  std::vector<char> bytes(buffer.size(), 'z');
  ASSERT_EQ(::send(pair.peer.get(), bytes.data(), bytes.size(), 0), ssize_t(bytes.size()));
  auto deadline = std::chrono::steady_clock::now() + kBound;
  while (!pending.drained() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_TRUE(pending.drained()) << "the sleeping helper missed the bytes";
  EXPECT_TRUE(buffer == bytes);
}

}  // namespace
}  // namespace ncclnet::socket
