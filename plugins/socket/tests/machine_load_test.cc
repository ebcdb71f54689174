// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the machine-wide runnable-thread check that stops helpers
// from spinning, and a helper that obeys it.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "machine_load.hpp"
#include "stream.hpp"

namespace ncclnet::socketnet {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A file in /proc/loadavg's format that a test can rewrite.
class LoadFile {
 public:
  LoadFile() {
    char name[] = "/tmp/sdk-socket-loadavg-XXXXXX";
    int fd = mkstemp(name);
    if (fd >= 0) {
      close(fd);
      path_ = name;
    }
  }
  ~LoadFile() {
    if (!path_.empty()) unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  void write(const char* line) const {
    FILE* f = std::fopen(path_.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(line, f);
    std::fclose(f);
  }

 private:
  std::string path_;
};

TEST(MachineLoad, ReadsTheRunnableCount) {
  EXPECT_EQ(runnableThreads("0.52 0.58 0.59 3/1234 56789\n"), 3);
  EXPECT_EQ(runnableThreads("12.00 8.00 4.00 130/2048 1"), 130);
  EXPECT_EQ(runnableThreads("0.52 0.58 0.59\n"), -1);
  EXPECT_EQ(runnableThreads(""), -1);
}

TEST(MachineLoad, BusyWhileHalfAgainAsManyThreadsAreRunnableAsCpus) {
  LoadFile file;
  ASSERT_FALSE(file.path().empty());
  file.write("4.00 4.00 4.00 7/300 1000\n");
  MachineLoad four(file.path(), 4);
  MachineLoad five(file.path(), 5);
  EXPECT_TRUE(four.busy());   // 7 > 4 + 2
  EXPECT_FALSE(five.busy());  // 7 = 5 + 2: NCCL's threads next to the helpers

  file.write("1.00 1.00 1.00 1/300 1000\n");
  // The last reading stands until it is a refresh period old.
  std::this_thread::sleep_for(std::chrono::nanoseconds(2 * MachineLoad::kRefreshNs));
  EXPECT_FALSE(four.busy());
}

TEST(MachineLoad, AFileThatCannotBeReadNeverStopsSpinning) {
  MachineLoad missing("/nonexistent/loadavg", 1);
  EXPECT_FALSE(missing.busy());
  LoadFile file;
  ASSERT_FALSE(file.path().empty());
  file.write("garbage\n");
  MachineLoad garbled(file.path(), 1);
  EXPECT_FALSE(garbled.busy());
}

// The live /proc/loadavg parses, and its count includes the reader.
TEST(MachineLoad, ProcLoadavgCountsTheReader) {
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) GTEST_SKIP() << "no /proc/loadavg on this system";
  char line[128] = {};
  ASSERT_NE(std::fgets(line, sizeof(line), f), nullptr);
  std::fclose(f);
  EXPECT_GE(runnableThreads(line), 1) << line;
}

// A helper on a machine with 1.5 runnable threads per CPU sleeps at once,
// however patient, even though its own process has few helpers: the other
// ranks' processes need those cores.
TEST(HelperPatience, HelpersSleepAtOnceOnABusyMachine) {
  LoadFile file;
  ASSERT_FALSE(file.path().empty());
  file.write("64.00 64.00 64.00 97/900 1000\n");
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  Fd peer(fds[1]);
  Health health(Logger(nullptr, "test"), "machine load test");
  Stream stream(Fd(fds[0]), /*sending=*/false, 0, &health);
  HelperCensus census(1024, std::make_unique<MachineLoad>(file.path(), 64));
  Worker worker({&stream}, Patience{seconds(60), seconds(60)}, &census, &health);

  std::vector<char> buffer(16);
  Pending pending;
  pending.add(1);
  stream.push(buffer.data(), buffer.size(), &pending);
  worker.wake();  // nothing to read: the stripe stalls
  auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (worker.sleeps() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  // A retrying helper would not sleep for 60 s; the poll() bound is 500 ms,
  // so two sleeps within 5 s also mean it went back to sleep after waking.
  EXPECT_GE(worker.sleeps(), 2u) << "a stalled helper kept retrying on a busy machine";

  std::vector<char> bytes(buffer.size(), 'z');
  ASSERT_EQ(::send(peer.get(), bytes.data(), bytes.size(), 0), ssize_t(bytes.size()));
  deadline = std::chrono::steady_clock::now() + seconds(30);
  while (!pending.drained() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_TRUE(pending.drained()) << "the sleeping helper missed the bytes";
  EXPECT_TRUE(buffer == bytes);
}

}  // namespace
}  // namespace ncclnet::socketnet
