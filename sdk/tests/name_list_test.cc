// SPDX-License-Identifier: Apache-2.0
// NameList against what NCCL 2.28's parseStringList/matchIfList and their
// callers select (src/misc/utils.cc, src/misc/socket.cc findInterfaces,
// src/transport/net_ib.cc ncclIbInit): each expectation is NCCL's answer.
#include "ncclnet/name_list.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ncclnet {
namespace {

bool keeps(const char* spec, const char* name, int port = -1) {
  return NameList::parse(spec, kMaxHcaEntries).keeps(name, port);
}

TEST(NameList, EmptySpecKeepsEverything) {
  EXPECT_TRUE(keeps("", "eth0"));
  EXPECT_TRUE(keeps("", "mlx5_0", 1));
}

TEST(NameList, EntriesArePrefixes) {
  EXPECT_TRUE(keeps("eth", "eth0"));
  EXPECT_TRUE(keeps("eth", "eth"));
  EXPECT_FALSE(keeps("eth0", "eth"));
  EXPECT_TRUE(keeps("ib,eth", "eth1"));
  EXPECT_FALSE(keeps("ib,eth", "lo"));
}

TEST(NameList, EqualsMatchesWholeNames) {
  EXPECT_TRUE(keeps("=eth0", "eth0"));
  EXPECT_FALSE(keeps("=eth0", "eth01"));
  EXPECT_FALSE(keeps("=eth", "eth0"));
}

TEST(NameList, CaretExcludes) {
  EXPECT_FALSE(keeps("^docker,lo", "lo"));
  EXPECT_FALSE(keeps("^docker,lo", "docker0"));
  EXPECT_TRUE(keeps("^docker,lo", "eth0"));
  EXPECT_FALSE(keeps("^=eth0", "eth0"));
  EXPECT_TRUE(keeps("^=eth0", "eth01"));
}

TEST(NameList, EqualsBeforeCaretIsPartOfTheName) {
  // NCCL looks for '^' first, then '='.
  NameList list = NameList::parse("=^eth0", kMaxInterfaceEntries);
  EXPECT_TRUE(list.exact());
  EXPECT_FALSE(list.excludes());
  EXPECT_TRUE(list.keeps("^eth0"));
  EXPECT_FALSE(list.keeps("eth0"));
}

TEST(NameList, CaretWithoutEntriesSelectsNothing) {
  EXPECT_FALSE(keeps("^", "eth0"));
  EXPECT_FALSE(keeps("^=", "eth0"));
  EXPECT_TRUE(keeps("=", "eth0"));
}

TEST(NameList, PortsNarrowOnlyWhenBothSidesHaveOne) {
  EXPECT_TRUE(keeps("mlx5_0:1", "mlx5_0", 1));
  EXPECT_FALSE(keeps("mlx5_0:1", "mlx5_0", 2));
  EXPECT_TRUE(keeps("mlx5_0:1", "mlx5_0"));  // an interface has no port
  EXPECT_TRUE(keeps("mlx5_0", "mlx5_0", 2));
  EXPECT_FALSE(keeps("^mlx5_0:1", "mlx5_0", 1));
  EXPECT_TRUE(keeps("^mlx5_0:1", "mlx5_0", 2));
}

TEST(NameList, PortIsReadAsAtoiReadsIt) {
  NameList list = NameList::parse("mlx5_0:1:2:3,mlx5_1:,mlx5_2:x,mlx5_3", kMaxHcaEntries);
  ASSERT_EQ(list.entries().size(), 4u);
  EXPECT_EQ(list.entries()[0].port, 1);  // ":rail:plane" ignored
  EXPECT_EQ(list.entries()[1].port, 0);
  EXPECT_EQ(list.entries()[2].port, 0);
  EXPECT_EQ(list.entries()[3].port, -1);
}

TEST(NameList, EmptyEntriesAndNamelessPortsAreSkipped) {
  NameList list = NameList::parse(",eth0,,:1,ib0,", kMaxInterfaceEntries);
  ASSERT_EQ(list.entries().size(), 2u);
  EXPECT_EQ(list.entries()[0].name, "eth0");
  EXPECT_EQ(list.entries()[1].name, "ib0");
}

TEST(NameList, OnlyTheFirstMaxEntriesCount) {
  std::string spec;
  for (int i = 0; i < 20; i++) spec += "if" + std::to_string(i) + ",";
  NameList list = NameList::parse("=" + spec, kMaxInterfaceEntries);
  EXPECT_EQ(list.entries().size(), kMaxInterfaceEntries);
  EXPECT_TRUE(list.keeps("if15"));
  EXPECT_FALSE(list.keeps("if16"));
}

TEST(NameList, LongNamesAreCutAt63Characters) {
  std::string name(80, 'a');
  NameList list = NameList::parse(name, kMaxInterfaceEntries);
  ASSERT_EQ(list.entries().size(), 1u);
  EXPECT_EQ(list.entries()[0].name.size(), 63u);
}

}  // namespace
}  // namespace ncclnet
