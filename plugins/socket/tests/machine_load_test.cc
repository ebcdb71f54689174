// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the machine-wide runnable-thread check that stops helpers
// from spinning.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "machine_load.hpp"

namespace ncclnet::socket {
namespace {

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

}  // namespace
}  // namespace ncclnet::socket
