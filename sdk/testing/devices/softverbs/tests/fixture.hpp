// SPDX-License-Identifier: Apache-2.0
// softverbs tests: a fixture that owns every verbs object a test creates,
// and helpers that post, connect and wait with deadlines.
#pragma once

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cstdint>
#include <vector>

namespace softverbs::testing {

constexpr int kFullAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
constexpr int kRoceV2Ipv4GidIndex = 3;

// One completion from `cq` within `seconds`; false on timeout.
bool pollOne(ibv_cq* cq, ibv_wc* wc, double seconds = 5);
// True when nothing completes on `cq` for `seconds`.
bool staysEmpty(ibv_cq* cq, double seconds = 0.2);

int toInit(ibv_qp* qp, int access = kFullAccess);
int toRtr(ibv_qp* qp, uint32_t remoteQpn, const ibv_gid& remoteGid);
int toRts(ibv_qp* qp);
ibv_qp_state stateOf(ibv_qp* qp);

int postWrite(ibv_qp* qp, ibv_wr_opcode opcode, const void* local, uint32_t length, uint32_t lkey,
              uint64_t remoteAddr, uint32_t rkey, uint64_t wrId, unsigned flags = IBV_SEND_SIGNALED,
              uint32_t imm = 0);
int postRecv(ibv_qp* qp, void* buffer, uint32_t length, uint32_t lkey, uint64_t wrId);

class VerbsTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  ibv_cq* makeCq();
  ibv_qp* makeQp(ibv_cq* cq, bool signalAll = false, uint32_t maxInline = 64);
  ibv_mr* reg(void* addr, size_t length, int access = kFullAccess);
  ibv_gid gid(int index = kRoceV2Ipv4GidIndex);
  // Two QPs of this device, connected to each other and in RTS.
  void connectPair(ibv_qp* a, ibv_qp* b);

  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  std::vector<ibv_qp*> qps_;
  std::vector<ibv_cq*> cqs_;
  std::vector<ibv_mr*> mrs_;
};

// A connected pair of QPs, each with its own CQ, and two 64 KiB buffers.
class PairTest : public VerbsTest {
 protected:
  static constexpr size_t kBytes = 64 * 1024;
  void SetUp() override;

  ibv_cq* cqA_ = nullptr;
  ibv_cq* cqB_ = nullptr;
  ibv_qp* a_ = nullptr;
  ibv_qp* b_ = nullptr;
  std::vector<char> bufA_ = std::vector<char>(kBytes);
  std::vector<char> bufB_ = std::vector<char>(kBytes);
  ibv_mr* mrA_ = nullptr;
  ibv_mr* mrB_ = nullptr;
  uint64_t addrB() const { return reinterpret_cast<uintptr_t>(bufB_.data()); }
};

}  // namespace softverbs::testing
