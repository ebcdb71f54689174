// SPDX-License-Identifier: Apache-2.0
// NCCL_PROTO read as NCCL reads it.
#include "ncclnet/nccl_protocols.hpp"

#include <gtest/gtest.h>

namespace {

using ncclnet::ncclPatOff;
using ncclnet::NcclProtocols;
using ncclnet::parseNcclProto;

NcclProtocols parsed(const char* value) {
  NcclProtocols p{false, false, false};
  EXPECT_TRUE(parseNcclProto(value, &p)) << value;
  return p;
}

TEST(NcclProto, UnsetOrEmptyEnablesAll) {
  NcclProtocols p{false, false, false};
  ASSERT_TRUE(parseNcclProto(nullptr, &p));
  EXPECT_TRUE(p.ll && p.ll128 && p.simple);
  EXPECT_FALSE(parsed("").simpleOnly());
}

TEST(NcclProto, ListsAndExclusionsInAnyCase) {
  EXPECT_TRUE(parsed("Simple").simpleOnly());
  EXPECT_TRUE(parsed("SIMPLE").simpleOnly());
  EXPECT_TRUE(parsed("^LL,ll128").simpleOnly());
  NcclProtocols p = parsed("LL,Simple");
  EXPECT_TRUE(p.ll && p.simple && !p.ll128);
  p = parsed("^LL");
  EXPECT_TRUE(!p.ll && p.ll128 && p.simple);
}

TEST(NcclProto, OtherSyntaxIsNotGuessed) {
  NcclProtocols p;
  EXPECT_FALSE(parseNcclProto("allreduce:simple", &p));
  EXPECT_FALSE(parseNcclProto("Simple,", &p));
  EXPECT_FALSE(parseNcclProto("LL256", &p));
}

// NCCL_PAT_ENABLE as NCCL's ncclLoadParam reads it: unset, empty or out of
// range keeps the default (automatic, PAT on where NCCL allows it); any
// text strtoll reads as 0 turns it off.
TEST(NcclPat, OffOnlyWhenNcclReadsZero) {
  EXPECT_FALSE(ncclPatOff(nullptr));
  EXPECT_FALSE(ncclPatOff(""));
  EXPECT_FALSE(ncclPatOff("1"));
  EXPECT_FALSE(ncclPatOff("2"));
  EXPECT_FALSE(ncclPatOff("0x1"));
  EXPECT_FALSE(ncclPatOff("99999999999999999999"));  // ERANGE: NCCL keeps the default
  EXPECT_TRUE(ncclPatOff("0"));
  EXPECT_TRUE(ncclPatOff("00"));
  EXPECT_TRUE(ncclPatOff("0x0"));
}

}  // namespace
