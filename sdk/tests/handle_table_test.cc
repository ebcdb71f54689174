// SPDX-License-Identifier: Apache-2.0
// The handle table behind the object model: what a handle decodes to, and
// which handles a lookup refuses (stale, of another kind, garbage).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "ncclnet/handle_table.hpp"

namespace {

using ncclnet::HandleKind;
using ncclnet::SlotId;
namespace bits = ncclnet::handle_bits;

using SmallTable = ncclnet::SlotTable<4, 2, 3>;  // 8 slots, generations 1..7

TEST(SlotTable, FindsWhatWasInsertedUntilItIsRemoved) {
  SmallTable table;
  int a = 1, b = 2;
  SlotId ia, ib;
  ASSERT_TRUE(table.insert(&a, &ia));
  ASSERT_TRUE(table.insert(&b, &ib));
  EXPECT_EQ(table.find(ia), &a);
  EXPECT_EQ(table.find(ib), &b);
  EXPECT_EQ(table.live(), 2u);
  EXPECT_EQ(table.remove(ia), &a);
  EXPECT_EQ(table.find(ia), nullptr);
  EXPECT_EQ(table.remove(ia), nullptr) << "a second remove finds nothing";
  EXPECT_EQ(table.find(ib), &b);
  EXPECT_EQ(table.live(), 1u);
}

TEST(SlotTable, AStaleIdIsRefusedAfterItsSlotIsReused) {
  SmallTable table;
  int a = 1, b = 2;
  SlotId first, second;
  ASSERT_TRUE(table.insert(&a, &first));
  table.remove(first);
  // Fill every slot: the freed one comes back only after the fresh ones.
  std::vector<SlotId> ids;
  for (int i = 0; i < 8; i++) {
    SlotId id;
    ASSERT_TRUE(table.insert(&b, &id)) << i;
    ids.push_back(id);
  }
  second = ids.back();
  EXPECT_EQ(second.index, first.index) << "the freed slot is the last one reused";
  EXPECT_NE(second.generation, first.generation);
  EXPECT_EQ(table.find(first), nullptr);
  EXPECT_EQ(table.find(second), &b);
}

TEST(SlotTable, IsFullAtCapacityAndRefusesOutOfRangeIds) {
  SmallTable table;
  int a = 0;
  SlotId id;
  for (uint32_t i = 0; i < SmallTable::kCapacity; i++) ASSERT_TRUE(table.insert(&a, &id));
  EXPECT_FALSE(table.insert(&a, &id));
  EXPECT_EQ(table.find(SlotId{SmallTable::kCapacity, 1}), nullptr);
  EXPECT_EQ(table.find(SlotId{0xffffffffu, 1}), nullptr);
  EXPECT_EQ(table.find(SlotId{0, 0}), nullptr) << "generation 0 marks a free slot";
}

TEST(SlotTable, GenerationsWrapButNeverReachZero) {
  SmallTable table;
  int a = 0;
  std::set<uint32_t> seen;
  for (int i = 0; i < 20; i++) {
    SlotId id;
    ASSERT_TRUE(table.insert(&a, &id));
    EXPECT_NE(id.generation, 0u);
    EXPECT_LE(id.generation, SmallTable::kGenerationMask);
    if (id.index == 0) seen.insert(id.generation);
    table.remove(id);
  }
  EXPECT_GT(seen.size(), 1u);
}

TEST(SlotTable, MarksAndAssignBelongToTheLiveSlot) {
  SmallTable table;
  int a = 0, b = 0;
  SlotId id;
  ASSERT_TRUE(table.insert(nullptr, &id));
  EXPECT_EQ(table.find(id), nullptr) << "reserved, nothing assigned yet";
  EXPECT_TRUE(table.assign(id, &a));
  EXPECT_EQ(table.find(id), &a);
  EXPECT_TRUE(table.setMark(id, 7));
  EXPECT_EQ(table.mark(id), 7u);
  uint32_t mark = 0;
  EXPECT_EQ(table.findByIndex(id.index, 0x3, id.generation & 0x3, &mark), &a);
  EXPECT_EQ(mark, 7u);
  EXPECT_EQ(table.findByIndex(id.index, 0x3, (id.generation + 1) & 0x3, &mark), nullptr);
  table.remove(id);
  EXPECT_FALSE(table.assign(id, &b));
  EXPECT_FALSE(table.setMark(id, 1));
  SlotId again;
  ASSERT_TRUE(table.insert(&b, &again));
  EXPECT_EQ(table.mark(again), 0u) << "a reused slot starts unmarked";
}

TEST(HandleBits, ObjectHandlesRoundTripAndAreNeverNullOrTheRecvHint) {
  for (auto kind : {HandleKind::Listen, HandleKind::Send, HandleKind::Recv, HandleKind::Mem,
                    HandleKind::Connect}) {
    SlotId id{0, 1};
    void* h = bits::object(kind, id);
    EXPECT_NE(h, nullptr);
    EXPECT_NE(h, reinterpret_cast<void*>(1));  // NCCL_NET_OPTIONAL_RECV_COMPLETION
    EXPECT_EQ(bits::kindOf(h), kind);
    EXPECT_EQ(bits::objectId(h).index, 0u);
    EXPECT_EQ(bits::objectId(h).generation, 1u);
  }
  SlotId big{ncclnet::ObjectTable::kCapacity - 1, (1u << bits::kObjectGenerationBits) - 1};
  void* h = bits::object(HandleKind::Mem, big);
  EXPECT_EQ(bits::objectId(h).index, big.index);
  EXPECT_EQ(bits::objectId(h).generation, big.generation);
}

TEST(HandleBits, RequestHandlesNameTheirCommAndSlot) {
  SlotId comm{ncclnet::ObjectTable::kCapacity - 1, 0x1234567};
  SlotId request{ncclnet::RequestTable::kCapacity - 1, (1u << bits::kRequestGenerationBits) - 1};
  void* h = bits::request(comm, request);
  EXPECT_EQ(bits::kindOf(h), HandleKind::Request);
  uint32_t low = 0;
  EXPECT_EQ(bits::requestCommIndex(h, &low).index, comm.index);
  EXPECT_EQ(low, comm.generation & bits::kCommGenerationInRequest);
  EXPECT_EQ(bits::requestId(h).index, request.index);
  EXPECT_EQ(bits::requestId(h).generation, request.generation);
}

TEST(HandleBits, AnAddressIsNoHandle) {
  int local = 0;
  // User-space addresses have their top bits clear: kind 0, named nothing.
  EXPECT_EQ(static_cast<int>(bits::kindOf(&local)), 0);
}

}  // namespace
