// SPDX-License-Identifier: Apache-2.0
// The libfabric tag layout (tag.hpp): widths, field separation, limits.
#include <gtest/gtest.h>

#include <climits>
#include <set>

#include "tag.hpp"

namespace ncclnet::ofi {
namespace {

TEST(TagLayout, WidthComesFromTheHighestFormatBit) {
  EXPECT_EQ(TagLayout::widthOf(0), 64);
  EXPECT_EQ(TagLayout::widthOf(0xaaaaaaaaaaaaaaaaull), 64);
  EXPECT_EQ(TagLayout::widthOf(0x5555555555555555ull), 63);
  EXPECT_EQ(TagLayout::widthOf(0x0000ffffffffffffull), 48);
}

TEST(TagLayout, SixtyFourBitsGiveFullNcclTags) {
  TagLayout layout;
  ASSERT_TRUE(TagLayout::forWidth(64, &layout));
  EXPECT_EQ(layout.tagBits(), 32);
  EXPECT_EQ(layout.connBits(), 19);
  EXPECT_TRUE(layout.fitsTag(-1));
  EXPECT_TRUE(layout.fitsTag(INT_MAX));
}

TEST(TagLayout, NarrowProvidersShrinkTheNcclTagFirst) {
  TagLayout layout;
  ASSERT_TRUE(TagLayout::forWidth(48, &layout));
  EXPECT_EQ(layout.connBits(), TagLayout::kMinConnBits);
  EXPECT_EQ(layout.tagBits(), 21);
  EXPECT_TRUE(layout.fitsTag((1 << 21) - 1));
  EXPECT_FALSE(layout.fitsTag(1 << 21));
  EXPECT_FALSE(layout.fitsTag(-1));
  EXPECT_FALSE(TagLayout::forWidth(TagLayout::kMinWidth - 1, &layout));
  EXPECT_TRUE(TagLayout::forWidth(TagLayout::kMinWidth, &layout));
}

TEST(TagLayout, FieldsRoundTripAndStayWithinTheWidth) {
  for (int width : {43, 48, 56, 63, 64}) {
    TagLayout layout;
    ASSERT_TRUE(TagLayout::forWidth(width, &layout)) << width;
    uint32_t conn = static_cast<uint32_t>(layout.connIdCount() - 1);
    int tag = layout.tagBits() >= 32 ? -7 : (1 << layout.tagBits()) - 1;
    uint64_t wire = layout.data(conn, tag, 0xabc);
    if (width < 64) {
      EXPECT_EQ(wire >> width, 0u) << width;
    }
    EXPECT_FALSE(layout.isConnect(wire));
    EXPECT_EQ(layout.connIdOf(wire), conn);
    EXPECT_EQ(layout.ncclTagOf(wire),
              static_cast<uint32_t>(tag) & ((1ull << layout.tagBits()) - 1));
    EXPECT_EQ(layout.seqOf(wire), 0xabcu);
  }
}

TEST(TagLayout, SequenceNumbersWrapWithoutTouchingOtherFields) {
  TagLayout layout;
  ASSERT_TRUE(TagLayout::forWidth(64, &layout));
  EXPECT_EQ(layout.data(5, 9, layout.seqMask() + 1), layout.data(5, 9, 0));
  EXPECT_EQ(layout.connIdOf(layout.data(5, 9, 0xffffffffu)), 5u);
  EXPECT_EQ(layout.ncclTagOf(layout.data(5, 9, 0xffffffffu)), 9u);
}

TEST(TagLayout, DataAndConnectTagsNeverCollide) {
  TagLayout layout;
  ASSERT_TRUE(TagLayout::forWidth(63, &layout));
  std::set<uint64_t> seen;
  for (uint32_t conn : {0u, 1u, 77u}) {
    for (int tag : {0, 1, 3, 1000}) {
      for (uint32_t seq : {0u, 1u, 4095u}) {
        EXPECT_TRUE(seen.insert(layout.data(conn, tag, seq)).second);
      }
    }
  }
  for (uint64_t listen : {0ull, 1ull, 2ull, 1ull << 40}) {
    uint64_t wire = layout.connect(listen);
    EXPECT_TRUE(layout.isConnect(wire));
    EXPECT_EQ(wire >> 63, 0u);
    EXPECT_TRUE(seen.insert(wire).second);
  }
}

}  // namespace
}  // namespace ncclnet::ofi
