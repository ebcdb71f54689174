// SPDX-License-Identifier: Apache-2.0
// Test kit: byte patterns tell messages apart and name the first bad byte.
#include "ncclnet/testing/byte_pattern.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace ncclnet::testing {
namespace {

TEST(BytePattern, FilledBufferChecksClean) {
  std::vector<uint8_t> data(100000);
  fillPattern(data.data(), data.size(), 7);
  EXPECT_EQ(checkPattern(data.data(), data.size(), 7), "");
  EXPECT_FALSE(firstMismatch(data.data(), data.size(), 7).has_value());
}

TEST(BytePattern, MismatchNamesItsOffset) {
  std::vector<uint8_t> data(4096);
  fillPattern(data.data(), data.size(), 3);
  data[1234] ^= 0x5a;
  data[2000] ^= 0x01;  // only the first is named
  ASSERT_EQ(firstMismatch(data.data(), data.size(), 3), std::optional<size_t>(1234));
  std::string why = checkPattern(data.data(), data.size(), 3);
  EXPECT_NE(why.find("byte 1234 of 4096 (message 3)"), std::string::npos) << why;
}

TEST(BytePattern, MessagesDifferFromEachOther) {
  std::vector<uint8_t> a(512), b(512);
  fillPattern(a.data(), a.size(), 1);
  fillPattern(b.data(), b.size(), 2);
  EXPECT_NE(a, b);
  EXPECT_NE(checkPattern(b.data(), b.size(), 1), "");
}

TEST(BytePattern, ShiftedDataIsCaught) {
  std::vector<uint8_t> data(1024);
  fillPattern(data.data() + 1, data.size() - 1, 9);
  EXPECT_TRUE(firstMismatch(data.data(), data.size() - 1, 9).has_value());
}

}  // namespace
}  // namespace ncclnet::testing
