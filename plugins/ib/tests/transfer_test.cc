// SPDX-License-Identifier: Apache-2.0
// sdk-ib: two processes, each with its own software verbs device, connected
// through the plugin as NCCL connects them (handle over a pipe), through
// ABI v8 and v11.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "harness.hpp"

namespace ncclnet::ib::testing {
namespace {

// Each side talks to the other over `peer` (the child's or the test's end).
using RecvBody = std::function<int(Session&, void* recvComm, Channel& peer)>;
using SendBody = std::function<void(Session&, void* sendComm, Channel& peer)>;

// A registered buffer, released with its session's comm.
struct Buffer {
  std::vector<char> bytes;
  void* mh = nullptr;
};

bool registerBuffer(Session& s, void* comm, Buffer* b, size_t size) {
  b->bytes.assign(size == 0 ? 1 : size, 0);
  return s.net().regMr(comm, b->bytes.data(), size, NCCL_PTR_HOST, &b->mh) == ncclSuccess;
}

class IbTransfer : public ::testing::TestWithParam<int> {
 protected:
  // The receiver runs in a forked child (exit status 0 = passed); the
  // sender runs here.
  void runPair(const RecvBody& receiver, const SendBody& sender) {
    int version = GetParam();
    ChildProcess child([&](Channel& parent) {
      Session s(version);
      if (!s.ok()) return 90;
      void* recvComm = nullptr;
      if (listenAndAccept(s, parent, &recvComm) != ncclSuccess) return 93;
      int code = receiver(s, recvComm, parent);
      s.net().closeRecv(recvComm);
      return code;
    });
    Session s(version);
    ASSERT_TRUE(s.ok()) << s.error();
    void* sendComm = nullptr;
    ASSERT_EQ(receiveHandleAndConnect(s, child.channel(), &sendComm), ncclSuccess);
    sender(s, sendComm, child.channel());
    ExitStatus status = child.wait(30);
    EXPECT_EQ(s.net().closeSend(sendComm), ncclSuccess);
    EXPECT_TRUE(status.succeeded()) << "the receiver " << status.describe();
  }
};

const std::vector<size_t> kSizes = {0, 1, 127, 128, 4095, 65536, (1u << 20) + 3, 16u << 20};

TEST_P(IbTransfer, SizesFromZeroTo16MiBArriveIntact) {
  runPair(
      [](Session& s, void* comm, Channel&) {
        for (size_t i = 0; i < kSizes.size(); i++) {
          Buffer b;
          if (!registerBuffer(s, comm, &b, kSizes[i] + 64)) return 1;
          void* data = b.bytes.data();
          size_t capacity = kSizes[i] + 64;
          int tag = 0;
          void* req = nullptr;
          if (s.net().irecv(comm, 1, &data, &capacity, &tag, &b.mh, nullptr, &req) != ncclSuccess ||
              req == nullptr) {
            return 2;
          }
          int sizes[1] = {-1};
          if (waitFor(s, req, sizes) != ncclSuccess) return 3;
          if (sizes[0] != static_cast<int>(kSizes[i])) return 4;
          if (!checkPattern(data, kSizes[i], i).empty()) return 5;
          s.net().deregMr(comm, b.mh);
        }
        return 0;
      },
      [](Session& s, void* comm, Channel&) {
        for (size_t i = 0; i < kSizes.size(); i++) {
          Buffer b;
          ASSERT_TRUE(registerBuffer(s, comm, &b, kSizes[i]));
          fillPattern(b.bytes.data(), kSizes[i], i);
          void* req = nullptr;
          ASSERT_EQ(postSend(s, comm, b.bytes.data(), kSizes[i], 0, b.mh, &req), ncclSuccess);
          int size = -1;
          ASSERT_EQ(waitFor(s, req, &size), ncclSuccess) << "size " << kSizes[i];
          EXPECT_EQ(size, static_cast<int>(kSizes[i]));
          EXPECT_EQ(s.net().deregMr(comm, b.mh), ncclSuccess);
        }
      });
}

TEST_P(IbTransfer, GroupedReceiveRoutesSendsByTag) {
  constexpr int kN = 8;
  runPair(
      [](Session& s, void* comm, Channel&) {
        Buffer b[kN];
        void* data[kN];
        void* mh[kN];
        size_t capacity[kN];
        int tags[kN];
        for (int i = 0; i < kN; i++) {
          if (!registerBuffer(s, comm, &b[i], 4096)) return 1;
          data[i] = b[i].bytes.data();
          mh[i] = b[i].mh;
          capacity[i] = 4096;
          tags[i] = 100 + i;
        }
        void* req = nullptr;
        if (s.net().irecv(comm, kN, data, capacity, tags, mh, nullptr, &req) != ncclSuccess ||
            req == nullptr) {
          return 2;
        }
        int sizes[kN];
        if (waitFor(s, req, sizes) != ncclSuccess) return 3;
        for (int i = 0; i < kN; i++) {
          if (sizes[i] != 100 * (i + 1)) return 10 + i;
          if (!checkPattern(data[i], sizes[i], 100 + i).empty()) return 20 + i;
        }
        return 0;
      },
      [](Session& s, void* comm, Channel&) {
        Buffer b[kN];
        void* reqs[kN];
        for (int k = 0; k < kN; k++) {
          int i = kN - 1 - k;  // posted in reverse tag order
          ASSERT_TRUE(registerBuffer(s, comm, &b[i], 100 * (i + 1)));
          fillPattern(b[i].bytes.data(), 100 * (i + 1), 100 + i);
          ASSERT_EQ(postSend(s, comm, b[i].bytes.data(), 100 * (i + 1), 100 + i, b[i].mh, &reqs[i]),
                    ncclSuccess);
        }
        for (int i = 0; i < kN; i++) {
          ASSERT_EQ(waitFor(s, reqs[i], nullptr), ncclSuccess);
        }
      });
}

TEST_P(IbTransfer, SendLargerThanTheReceiveIsTruncationOnBothSides) {
  runPair(
      [](Session& s, void* comm, Channel&) {
        Buffer b;
        if (!registerBuffer(s, comm, &b, 100)) return 1;
        void* data = b.bytes.data();
        size_t capacity = 100;
        int tag = 0;
        void* req = nullptr;
        if (s.net().irecv(comm, 1, &data, &capacity, &tag, &b.mh, nullptr, &req) != ncclSuccess) {
          return 2;
        }
        int sizes[1];
        if (waitFor(s, req, sizes) != ncclInvalidUsage) return 3;
        for (char c : b.bytes) {
          if (c != 0) return 4;  // nothing was written past, or into, the receive
        }
        return 0;
      },
      [](Session& s, void* comm, Channel&) {
        Buffer b;
        ASSERT_TRUE(registerBuffer(s, comm, &b, 200));
        void* req = nullptr;
        ASSERT_EQ(postSend(s, comm, b.bytes.data(), 200, 0, b.mh, &req), ncclSuccess);
        EXPECT_EQ(waitFor(s, req, nullptr), ncclInvalidUsage);
      });
}

TEST_P(IbTransfer, SendWaitsForTheReceiverAndReceivesAreBounded) {
  constexpr int kMessages = NCCL_NET_MAX_REQUESTS;
  runPair(
      [](Session& s, void* comm, Channel& peer) {
        char go = 0;
        if (!peer.receive(&go, 1)) return 1;  // the sender has seen "not yet"
        Buffer b;
        if (!registerBuffer(s, comm, &b, kMessages * 256)) return 2;
        void* reqs[kMessages];
        for (int m = 0; m < kMessages; m++) {
          void* data = b.bytes.data() + m * 256;
          size_t capacity = 256;
          int tag = 0;
          if (s.net().irecv(comm, 1, &data, &capacity, &tag, &b.mh, nullptr, &reqs[m]) !=
                  ncclSuccess ||
              reqs[m] == nullptr) {
            return 3;
          }
        }
        void* data = b.bytes.data();
        size_t capacity = 256;
        int tag = 0;
        void* extra = reinterpret_cast<void*>(0x1);  // NCCL may preload this
        if (s.net().irecv(comm, 1, &data, &capacity, &tag, &b.mh, nullptr, &extra) != ncclSuccess ||
            extra != nullptr) {
          return 4;  // 33 receives in flight: must be "not now"
        }
        if (!peer.send(&go, 1)) return 5;
        for (int m = 0; m < kMessages; m++) {
          int sizes[1];
          if (waitFor(s, reqs[m], sizes) != ncclSuccess || sizes[0] != 256) return 6;
          if (!checkPattern(b.bytes.data() + m * 256, 256, m).empty()) return 7;
        }
        return 0;
      },
      [](Session& s, void* comm, Channel& peer) {
        Buffer b;
        ASSERT_TRUE(registerBuffer(s, comm, &b, kMessages * 256));
        for (int m = 0; m < kMessages; m++) fillPattern(b.bytes.data() + m * 256, 256, m);
        void* req = reinterpret_cast<void*>(0x1);
        for (int i = 0; i < 200; i++) {  // nothing posted on the other side yet
          ASSERT_EQ(s.net().isend(comm, b.bytes.data(), 256, 0, b.mh, nullptr, &req), ncclSuccess);
          ASSERT_EQ(req, nullptr);
        }
        char go = 1;
        ASSERT_TRUE(peer.send(&go, 1));
        ASSERT_TRUE(peer.receive(&go, 1));
        void* reqs[kMessages];
        for (int m = 0; m < kMessages; m++) {
          ASSERT_EQ(postSend(s, comm, b.bytes.data() + m * 256, 256, 0, b.mh, &reqs[m]),
                    ncclSuccess);
        }
        for (int m = 0; m < kMessages; m++) ASSERT_EQ(waitFor(s, reqs[m], nullptr), ncclSuccess);
      });
}

TEST_P(IbTransfer, ThirtyTwoGroupedReceivesOfEightInFlight) {
  constexpr int kGroups = NCCL_NET_MAX_REQUESTS;
  constexpr int kN = 8;
  constexpr size_t kBytes = 512;
  runPair(
      [](Session& s, void* comm, Channel& peer) {
        Buffer b;
        if (!registerBuffer(s, comm, &b, kGroups * kN * kBytes)) return 1;
        void* reqs[kGroups];
        for (int g = 0; g < kGroups; g++) {
          void* data[kN];
          void* mh[kN];
          size_t capacity[kN];
          int tags[kN];
          for (int i = 0; i < kN; i++) {
            data[i] = b.bytes.data() + (g * kN + i) * kBytes;
            mh[i] = b.mh;
            capacity[i] = kBytes;
            tags[i] = i;
          }
          if (s.net().irecv(comm, kN, data, capacity, tags, mh, nullptr, &reqs[g]) != ncclSuccess ||
              reqs[g] == nullptr) {
            return 2;
          }
        }
        char posted = 1;
        if (!peer.send(&posted, 1)) return 3;
        for (int g = 0; g < kGroups; g++) {
          int sizes[kN];
          if (waitFor(s, reqs[g], sizes) != ncclSuccess) return 4;
          for (int i = 0; i < kN; i++) {
            if (sizes[i] != static_cast<int>(kBytes)) return 5;
            if (!checkPattern(b.bytes.data() + (g * kN + i) * kBytes, kBytes, g * kN + i).empty())
              return 6;
          }
        }
        return 0;
      },
      [](Session& s, void* comm, Channel& peer) {
        char posted = 0;
        ASSERT_TRUE(peer.receive(&posted, 1));
        Buffer b;
        ASSERT_TRUE(registerBuffer(s, comm, &b, kGroups * kN * kBytes));
        std::vector<void*> reqs;
        for (int g = 0; g < kGroups; g++) {
          for (int i = 0; i < kN; i++) {
            char* data = b.bytes.data() + (g * kN + i) * kBytes;
            fillPattern(data, kBytes, g * kN + i);
            void* req = nullptr;
            ASSERT_EQ(postSend(s, comm, data, kBytes, i, b.mh, &req), ncclSuccess);
            reqs.push_back(req);
          }
        }
        EXPECT_EQ(reqs.size(), static_cast<size_t>(kGroups * kN));  // all 256 in flight at once
        for (void* req : reqs) ASSERT_EQ(waitFor(s, req, nullptr), ncclSuccess);
      });
}

TEST_P(IbTransfer, MessagesSplitAcrossSeveralQps) {
  setenv("NCCL_IB_QPS_PER_CONNECTION", "3", 1);  // inherited by the child
  setenv("NCCL_IB_SPLIT_DATA_ON_QPS", "1", 1);
  constexpr size_t kBytes = (1u << 20) + 5;
  runPair(
      [](Session& s, void* comm, Channel&) {
        Buffer b;
        if (!registerBuffer(s, comm, &b, kBytes)) return 1;
        void* data = b.bytes.data();
        size_t capacity = kBytes;
        int tag = 0;
        void* req = nullptr;
        if (s.net().irecv(comm, 1, &data, &capacity, &tag, &b.mh, nullptr, &req) != ncclSuccess) {
          return 2;
        }
        int sizes[1];
        if (waitFor(s, req, sizes) != ncclSuccess || sizes[0] != static_cast<int>(kBytes)) return 3;
        return checkPattern(data, kBytes, 9).empty() ? 0 : 4;
      },
      [](Session& s, void* comm, Channel&) {
        Buffer b;
        ASSERT_TRUE(registerBuffer(s, comm, &b, kBytes));
        fillPattern(b.bytes.data(), kBytes, 9);
        void* req = nullptr;
        ASSERT_EQ(postSend(s, comm, b.bytes.data(), kBytes, 0, b.mh, &req), ncclSuccess);
        EXPECT_EQ(waitFor(s, req, nullptr), ncclSuccess);
      });
  unsetenv("NCCL_IB_QPS_PER_CONNECTION");
  unsetenv("NCCL_IB_SPLIT_DATA_ON_QPS");
}

TEST_P(IbTransfer, WriteIntoADeregisteredReceiveIsARemoteError) {
  runPair(
      [](Session& s, void* comm, Channel& peer) {
        Buffer b;
        if (!registerBuffer(s, comm, &b, 8192)) return 1;
        void* data = b.bytes.data();
        size_t capacity = 8192;
        int tag = 0;
        void* req = nullptr;
        if (s.net().irecv(comm, 1, &data, &capacity, &tag, &b.mh, nullptr, &req) != ncclSuccess) {
          return 2;
        }
        s.net().deregMr(comm, b.mh);  // the rkey in the CTS is now stale
        char go = 1;
        if (!peer.send(&go, 1)) return 3;
        // The receiver learns of it through IBV_EVENT_QP_ACCESS_ERR.
        return waitFor(s, req, nullptr) == ncclRemoteError ? 0 : 4;
      },
      [](Session& s, void* comm, Channel& peer) {
        char go = 0;
        ASSERT_TRUE(peer.receive(&go, 1));
        Buffer b;
        ASSERT_TRUE(registerBuffer(s, comm, &b, 4096));
        void* req = nullptr;
        ASSERT_EQ(postSend(s, comm, b.bytes.data(), 4096, 0, b.mh, &req), ncclSuccess);
        EXPECT_EQ(waitFor(s, req, nullptr), ncclRemoteError);
      });
}

INSTANTIATE_TEST_SUITE_P(Abi, IbTransfer, ::testing::Values(8, 11),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "V" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace ncclnet::ib::testing
