// SPDX-License-Identifier: Apache-2.0
// sdk-socket: NCCLNET_SOCKET_TIMELINE and NCCLNET_SOCKET_TRACE_DIR, end to
// end in one process: each comm logs its messages' stage averages (and
// writes their stamps) once, when it closes, and only when asked to.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"
#include "ncclnet/host/log_capture.hpp"

namespace ncclnet::socket::testing {
namespace {

using ncclnet::host::captureLogger;

std::vector<std::string> timelineLines() {
  std::vector<std::string> found;
  for (const auto& line : ncclnet::host::capturedLines()) {
    if (line.text.find("timeline:") != std::string::npos) found.push_back(line.text);
  }
  return found;
}

// Sends `sizes` from one comm to the other (both in this process) and closes
// both; every message is checked.
void exchange(Session& s, const std::vector<size_t>& sizes) {
  void* sc = nullptr;
  void* rc = nullptr;
  ASSERT_EQ(connectPair(s, &sc, &rc), ncclSuccess);

  for (size_t i = 0; i < sizes.size(); i++) {
    std::vector<uint8_t> in(sizes[i]), out(sizes[i] + 1);
    fillPattern(in.data(), in.size(), i);
    void* data = out.data();
    size_t capacity = out.size();
    int tag = 3;
    void* recvRequest = nullptr;
    ASSERT_EQ(s.net().irecv(rc, 1, &data, &capacity, &tag, nullptr, nullptr, &recvRequest),
              ncclSuccess);
    void* sendRequest = nullptr;
    ASSERT_EQ(s.net().isend(sc, in.data(), in.size(), tag, nullptr, nullptr, &sendRequest),
              ncclSuccess);
    ASSERT_NE(sendRequest, nullptr);
    ASSERT_NE(recvRequest, nullptr);
    bool timedOut = false;
    int size = -1;
    // Both sides progress from this one thread, as NCCL's proxy would.
    int sendDone = 0, recvDone = 0;
    auto start = Clock::now();
    while ((!sendDone || !recvDone) && !timedOut) {
      if (!sendDone) {
        ASSERT_EQ(s.net().test(sendRequest, &sendDone, nullptr), ncclSuccess);
      }
      if (!recvDone) {
        ASSERT_EQ(s.net().test(recvRequest, &recvDone, &size), ncclSuccess);
      }
      timedOut = std::chrono::duration<double>(Clock::now() - start).count() > 30;
    }
    ASSERT_FALSE(timedOut) << "message " << i;
    ASSERT_EQ(size, static_cast<int>(sizes[i]));
    ASSERT_EQ(checkPattern(out.data(), sizes[i], i), "");
  }
  EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
  EXPECT_EQ(s.net().closeRecv(rc), ncclSuccess);
}

class TimelineKnob : public ::testing::Test {
 protected:
  void SetUp() override { ncclnet::host::clearCapturedLines(); }
  void TearDown() override {
    unsetenv("NCCLNET_SOCKET_TIMELINE");
    unsetenv("NCCLNET_SOCKET_TRACE_DIR");
  }
};

TEST_F(TimelineKnob, EachCommLogsItsStagesOnceAtClose) {
  setenv("NCCLNET_SOCKET_TIMELINE", "1", 1);
  Session s(0, captureLogger);
  ASSERT_TRUE(s.ok()) << s.error();
  // Inline, striped and empty messages: 4 in all, 1 MiB + 200 bytes.
  exchange(s, {100, 1 << 20, 0, 100});
  std::vector<std::string> lines = timelineLines();
  ASSERT_EQ(lines.size(), 2u);
  const std::string& send = lines[0].find("sendComm") != std::string::npos ? lines[0] : lines[1];
  const std::string& recv = &send == &lines[0] ? lines[1] : lines[0];
  EXPECT_NE(send.find("sendComm"), std::string::npos) << send;
  EXPECT_NE(recv.find("recvComm"), std::string::npos) << recv;
  for (const std::string* line : {&send, &recv}) {
    EXPECT_NE(line->find("4 messages of 262194 bytes on average"), std::string::npos) << *line;
    // Every isend/irecv and test() of the comm is timed: 4 posts and at
    // least one test() per message.
    size_t calls = line->find("; ");
    ASSERT_NE(calls, std::string::npos) << *line;
    long count = 0;
    ASSERT_EQ(std::sscanf(line->c_str() + calls, "; %ld calls of", &count), 1) << *line;
    EXPECT_GE(count, 8) << *line;
  }
  EXPECT_NE(send.find("waiting for clear-to-send"), std::string::npos) << send;
  EXPECT_NE(send.find("matched to last byte sent"), std::string::npos) << send;
  EXPECT_NE(recv.find("header to last byte received"), std::string::npos) << recv;
  EXPECT_NE(recv.find("last byte to test()"), std::string::npos) << recv;
}

TEST_F(TimelineKnob, OffByDefault) {
  unsetenv("NCCLNET_SOCKET_TIMELINE");
  Session s(0, captureLogger);
  ASSERT_TRUE(s.ok()) << s.error();
  exchange(s, {100, 1 << 20});
  EXPECT_TRUE(timelineLines().empty());
}

// One trace file per comm, named by pid, direction and the control socket's
// ports (so the two ends of a connection pair up), with a line of stamps per
// message in order.
TEST_F(TimelineKnob, TraceDirGetsEveryMessageOfEachComm) {
  char dir[] = "/tmp/sdk-socket-trace-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("NCCLNET_SOCKET_TRACE_DIR", dir, 1);
  {
    Session s(0, captureLogger);
    ASSERT_TRUE(s.ok()) << s.error();
    exchange(s, {100, 1 << 20, 0, 100});
  }
  std::vector<std::string> files;
  DIR* d = opendir(dir);
  ASSERT_NE(d, nullptr);
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') files.emplace_back(e->d_name);
  }
  closedir(d);
  ASSERT_EQ(files.size(), 2u);
  int pid = 0, sendLocal = 0, sendPeer = 0, recvLocal = 0, recvPeer = 0;
  for (const std::string& name : files) {
    int p = 0, a = 0, b = 0;
    char kind[8] = {};
    ASSERT_EQ(std::sscanf(name.c_str(), "sdk-socket-%d-%4[a-z]-%d-%d.txt", &p, kind, &a, &b), 4)
        << name;
    pid = p;
    (std::string(kind) == "send" ? sendLocal : recvLocal) = a;
    (std::string(kind) == "send" ? sendPeer : recvPeer) = b;

    std::ifstream in(std::string(dir) + "/" + name);
    std::string header;
    std::getline(in, header);
    EXPECT_EQ(header.rfind("# postedNs matchedNs lastByteNs reportedNs bytes", 0), 0u) << header;
    std::vector<long long> bytes;
    std::string row;
    while (std::getline(in, row)) {
      long long posted, matched, lastByte, reported, size;
      std::istringstream fields(row);
      ASSERT_TRUE(fields >> posted >> matched >> lastByte >> reported >> size) << row;
      EXPECT_LE(posted, matched) << name << ": " << row;
      EXPECT_LE(matched, reported) << name << ": " << row;
      EXPECT_LE(lastByte, reported) << name << ": " << row;
      bytes.push_back(size);
    }
    EXPECT_EQ(bytes, (std::vector<long long>{100, 1 << 20, 0, 100})) << name;
    std::remove((std::string(dir) + "/" + name).c_str());
  }
  rmdir(dir);
  EXPECT_EQ(pid, static_cast<int>(getpid()));
  EXPECT_EQ(sendLocal, recvPeer);
  EXPECT_EQ(sendPeer, recvLocal);
  EXPECT_TRUE(timelineLines().empty()) << "the trace alone logs no stage line";
}

}  // namespace
}  // namespace ncclnet::socket::testing
