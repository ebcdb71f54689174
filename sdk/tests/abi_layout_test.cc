// SPDX-License-Identifier: Apache-2.0
// The ABI layout as C++ sees it (static_asserts in abi_layout_checks.h fail
// the build), and agreement between the C and C++ views at run time.
#include <gtest/gtest.h>

#include "abi_layout_checks.h"
#include "abi_layout_checks_tables.h"

extern "C" size_t ncclnetCLayoutSize(int version);
extern "C" size_t ncclnetCRailIdOffset(void);

TEST(AbiLayout, PropertiesSizesMatchNccl) {
  const size_t expected[] = {48, 56, 64, 104, 104, 112, 128};
  for (int v = 6; v <= 12; v++) {
    EXPECT_EQ(ncclnetCLayoutSize(v), expected[v - 6]) << "ncclNetProperties_v" << v << "_t in C";
  }
}

TEST(AbiLayout, CAndCppAgree) {
  EXPECT_EQ(ncclnetCLayoutSize(12), sizeof(ncclNetProperties_v12_t));
  EXPECT_EQ(ncclnetCLayoutSize(11), sizeof(ncclNetProperties_v11_t));
  EXPECT_EQ(ncclnetCLayoutSize(8), sizeof(ncclNetProperties_v8_t));
  EXPECT_EQ(ncclnetCRailIdOffset(), offsetof(ncclNetProperties_v12_t, railId));
}

TEST(AbiLayout, V12PropertiesAreNotAPrefixOfV11) {
  // The pitfall the headers warn about: everything after vProps moved.
  EXPECT_NE(offsetof(ncclNetProperties_v11_t, maxP2pBytes),
            offsetof(ncclNetProperties_v12_t, maxP2pBytes));
  EXPECT_EQ(offsetof(ncclNetProperties_v11_t, vProps), offsetof(ncclNetProperties_v12_t, vProps));
}
