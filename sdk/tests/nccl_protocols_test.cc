// SPDX-License-Identifier: Apache-2.0
// NCCL_PROTO read as NCCL reads it.
#include "ncclnet/nccl_protocols.hpp"

#include <gtest/gtest.h>

namespace {

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

}  // namespace
