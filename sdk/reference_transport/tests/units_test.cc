// SPDX-License-Identifier: Apache-2.0
// Unit tests: step arithmetic, LL/LL128 line formats, the byte pattern, the
// memory map and the knobs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "ncclnet/transport/config.hpp"
#include "ncclnet/transport/connect_map.hpp"
#include "ncclnet/transport/lines.hpp"
#include "ncclnet/transport/pattern.hpp"
#include "ncclnet/transport/steps.hpp"

namespace ncclnet::transport {
namespace {

TEST(Steps, SlotWrapsEveryEightSteps) {
  EXPECT_EQ(slotOf(0, 0), 0);
  EXPECT_EQ(slotOf(5, 3), 0);
  EXPECT_EQ(slotOf(6, 3), 1);
  EXPECT_EQ(slotOf(uint64_t{1} << 40, 9), 1);
}

TEST(Steps, RoundUpToChunkSteps) {
  EXPECT_EQ(roundUp(0, 4), 0u);
  EXPECT_EQ(roundUp(5, 4), 8u);
  EXPECT_EQ(roundUp(8, 4), 8u);
  EXPECT_EQ(roundUp(7, 1), 7u);
}

TEST(Steps, SliceCapacityPerProtocol) {
  EXPECT_EQ(sliceCapacity(Protocol::Simple, 524288, 1), 524288u);
  EXPECT_EQ(sliceCapacity(Protocol::Simple, 524288, 2), 1048576u);
  EXPECT_EQ(sliceCapacity(Protocol::LL, 65536, 1), 32768u);       // half are flags
  EXPECT_EQ(sliceCapacity(Protocol::LL128, 614400, 1), 576000u);  // 120 of 128
}

TEST(Steps, EncodedBytesAreWholeLines) {
  EXPECT_EQ(encodedBytes(Protocol::Simple, 13), 13u);
  EXPECT_EQ(encodedBytes(Protocol::LL, 1), 16u);
  EXPECT_EQ(encodedBytes(Protocol::LL, 8), 16u);
  EXPECT_EQ(encodedBytes(Protocol::LL, 9), 32u);
  EXPECT_EQ(encodedBytes(Protocol::LL128, 120), 128u);
  EXPECT_EQ(encodedBytes(Protocol::LL128, 121), 256u);
  EXPECT_EQ(encodedBytes(Protocol::LL, 0), 0u);
}

TEST(Steps, ZeroBytesStillMoveOneSlice) {
  StepPlan plan = planSteps(0, 1000, 2);
  EXPECT_EQ(plan.nsteps, 2);
  ASSERT_EQ(plan.sliceBytes.size(), 1u);
  EXPECT_EQ(plan.sliceBytes[0], 0u);
}

TEST(Steps, PlanCutsIntoFullSlicesAndARemainder) {
  StepPlan plan = planSteps(2500, 1000, 2);
  EXPECT_EQ(plan.nsteps, 6);
  EXPECT_EQ(plan.sliceBytes, (std::vector<size_t>{1000, 1000, 500}));
}

// The formulas the CUDA device peer computes per slice agree with the plan.
TEST(Steps, SliceFormulasMatchThePlan) {
  for (size_t nbytes : {size_t{0}, size_t{1}, size_t{999}, size_t{1000}, size_t{2500}}) {
    StepPlan plan = planSteps(nbytes, 1000, 1);
    ASSERT_EQ(sliceCount(nbytes, 1000), plan.sliceBytes.size());
    for (size_t i = 0; i < plan.sliceBytes.size(); i++) {
      EXPECT_EQ(sliceBytesAt(nbytes, 1000, i), plan.sliceBytes[i]) << nbytes << " slice " << i;
    }
  }
}

// What the kernels compare and write word by word is fillPattern's bytes.
TEST(Pattern, WordsAtAnyOffsetAreTheMessageBytes) {
  std::vector<uint8_t> bytes(64);
  fillPattern(bytes.data(), bytes.size(), 9, 0);
  for (uint64_t pos = 0; pos + 8 <= bytes.size(); pos++) {
    uint64_t expected = 0;
    std::memcpy(&expected, bytes.data() + pos, 8);
    EXPECT_EQ(patternBytesAt(9, pos), expected) << "position " << pos;
    EXPECT_EQ(patternByte(9, pos), bytes[pos]);
  }
}

TEST(Pattern, MismatchFoundAtItsByte) {
  std::vector<uint8_t> buf(1000);
  fillPattern(buf.data(), buf.size(), 42, 3);
  EXPECT_EQ(findMismatch(buf.data(), buf.size(), 42, 3), buf.size());
  EXPECT_EQ(findMismatch(buf.data(), buf.size(), 43, 3), 0u);
  buf[517] ^= 1;
  EXPECT_EQ(findMismatch(buf.data(), buf.size(), 42, 3), 517u);
}

TEST(Pattern, OffsetsComposeLikeOneMessage) {
  std::vector<uint8_t> whole(100), parts(100);
  fillPattern(whole.data(), 100, 7, 0);
  fillPattern(parts.data(), 37, 7, 0);
  fillPattern(parts.data() + 37, 63, 7, 37);
  EXPECT_EQ(whole, parts);
}

struct alignas(128) LineBuffer {
  char bytes[8 * 128] = {};
};

TEST(LL, LineLayoutIsDataFlagDataFlag) {
  LineBuffer b;
  uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  llWrite(b.bytes, payload, 8, 0xabcd);
  uint32_t words[4];
  std::memcpy(words, b.bytes, 16);
  EXPECT_EQ(words[0], 0x04030201u);
  EXPECT_EQ(words[1], 0xabcdu);
  EXPECT_EQ(words[2], 0x08070605u);
  EXPECT_EQ(words[3], 0xabcdu);
}

TEST(LL, WordHelpersPackDataAndFlag) {
  uint64_t data = 0x8877665544332211ull;
  uint64_t first = llFirstWord(data, 0xabcd), second = llSecondWord(data, 0xabcd);
  EXPECT_EQ(first, 0x0000abcd44332211ull);
  EXPECT_EQ(second, 0x0000abcd88776655ull);
  EXPECT_EQ(llWordFlag(first), 0xabcdu);
  EXPECT_EQ(llLineData(first, second), data);
}

TEST(LL, RoundTripsAnyLength) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{100}}) {
    LineBuffer b;
    std::vector<uint8_t> in(n), out(n);
    fillPattern(in.data(), n, n, 0);
    llWrite(b.bytes, in.data(), n, 5);
    ASSERT_TRUE(llRead(b.bytes, n, 5, out.data())) << n;
    EXPECT_EQ(in, out) << n;
  }
}

TEST(LL, StaleOrHalfFlaggedLineIsNotReady) {
  LineBuffer b;
  uint8_t payload[16] = {};
  llWrite(b.bytes, payload, 16, 9);
  EXPECT_TRUE(llReady(b.bytes, 2, 9));
  EXPECT_FALSE(llReady(b.bytes, 2, 17));  // the same slot, eight steps later
  uint32_t stale = 1;
  std::memcpy(b.bytes + 16 + 12, &stale, 4);  // second line, flag2 only
  EXPECT_FALSE(llReady(b.bytes, 2, 9));
  EXPECT_TRUE(llReady(b.bytes, 1, 9));
}

TEST(LL128, FlagIsTheLastWordOfEachLine) {
  LineBuffer b;
  std::vector<uint8_t> in(200);
  fillPattern(in.data(), in.size(), 1, 0);
  ll128Write(b.bytes, in.data(), in.size(), 0x1234);
  for (int line = 0; line < 2; line++) {
    uint64_t flag;
    std::memcpy(&flag, b.bytes + line * 128 + 120, 8);
    EXPECT_EQ(flag, 0x1234u);
  }
  EXPECT_EQ(std::memcmp(b.bytes, in.data(), 120), 0);
  EXPECT_EQ(std::memcmp(b.bytes + 128, in.data() + 120, 80), 0);
}

TEST(LL128, RoundTripAndPerLineReadiness) {
  LineBuffer b;
  std::vector<uint8_t> in(360), out(360);
  fillPattern(in.data(), in.size(), 2, 0);
  ll128Write(b.bytes, in.data(), in.size(), 77);
  ASSERT_TRUE(ll128Read(b.bytes, in.size(), 77, out.data()));
  EXPECT_EQ(in, out);
  uint64_t old = 69;
  std::memcpy(b.bytes + 2 * 128 + 120, &old, 8);  // third line still from an older step
  EXPECT_FALSE(ll128Ready(b.bytes, 3, 77));
  EXPECT_TRUE(ll128Ready(b.bytes, 2, 77));
  EXPECT_FALSE(ll128Read(b.bytes, in.size(), 77, out.data()));
}

TEST(ConnectMap, PrivateBanksGrowAndStayAligned) {
  ConnectMap map;
  MapEntry a = map.reserve(Bank::Host, 100);
  MapEntry b = map.reserve(Bank::Host, 8);
  MapEntry c = map.reserve(Bank::Device, 4096);
  EXPECT_EQ(a.offset, 0u);
  EXPECT_EQ(b.offset, 128u);
  EXPECT_EQ(c.offset, 0u);
  EXPECT_EQ(map.bank(Bank::Host).size, 136u);
  EXPECT_TRUE(ConnectMap::isDevice(c));
  EXPECT_FALSE(ConnectMap::isDevice(a));
}

TEST(ConnectMap, SharedBankEntryIsTheWholePool) {
  ConnectMap map;
  MapEntry pool = map.reserve(Bank::SharedHost, 1 << 20);
  EXPECT_EQ(pool.offset, 0u);
  char storage[64];
  map.attach(Bank::SharedHost, storage, storage, sizeof(storage));
  EXPECT_EQ(map.cpu(pool), storage);
  MapEntry unused;
  EXPECT_EQ(map.cpu(unused), nullptr);
}

TEST(Config, DefaultsAreNccls) {
  TransportConfig c;
  EXPECT_EQ(c.buffSizes[index(Protocol::Simple)], 4u << 20);
  EXPECT_EQ(c.buffSizes[index(Protocol::LL)], 512u << 10);
  EXPECT_EQ(c.buffSizes[index(Protocol::LL128)], 4800u << 10);
  EXPECT_EQ(c.stepSize(Protocol::LL128), 614400u);
  EXPECT_EQ(c.validate(Logger()), ncclSuccess);
}

TEST(Config, RejectsBuffersThatDoNotSplitIntoLines) {
  TransportConfig c;
  c.buffSizes[index(Protocol::LL128)] = 8 * 100;
  EXPECT_EQ(c.validate(Logger()), ncclInvalidUsage);
  c = TransportConfig();
  c.p2pChunkSize = c.stepSize(Protocol::Simple) * 2;
  EXPECT_EQ(c.validate(Logger()), ncclInvalidUsage);
}

TEST(Config, ReadsNcclNames) {
  setenv("NCCL_BUFFSIZE", "1048576", 1);
  setenv("NCCL_NET_SHARED_COMMS", "0", 1);
  ParamTable params{Logger()};
  TransportConfig c;
  ASSERT_EQ(TransportConfig::fromEnv(params, &c), ncclSuccess);
  unsetenv("NCCL_BUFFSIZE");
  unsetenv("NCCL_NET_SHARED_COMMS");
  EXPECT_EQ(c.buffSizes[index(Protocol::Simple)], 1u << 20);
  EXPECT_FALSE(c.sharedComms);
  EXPECT_TRUE(c.optionalRecvCompletion);
}

}  // namespace
}  // namespace ncclnet::transport
