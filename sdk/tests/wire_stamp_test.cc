// SPDX-License-Identifier: Apache-2.0
// The handle codec: a stamp written is accepted, and each way of failing
// gets its own verdict, text and result.
#include "ncclnet/wire_stamp.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

using ncclnet::WireSource;
using ncclnet::WireStamp;
using ncclnet::WireVerdict;

// A layout with a hole and fields of three widths, as the plugins have.
constexpr WireStamp kStamp{"sdk-test", "handshake", 0x7364'6b74, 3, {{0, 4}, {6, 2}, {8, 8}}};
constexpr uint64_t kSecret = 0x0123'4567'89ab'cdefull;

std::vector<uint8_t> written() {
  std::vector<uint8_t> bytes(32, 0xee);
  kStamp.write(bytes.data(), kSecret);
  return bytes;
}

TEST(WireStamp, RoundTrip) {
  std::vector<uint8_t> bytes = written();
  EXPECT_EQ(kStamp.bytes(), 16u);
  EXPECT_EQ(kStamp.check(bytes.data(), bytes.size(), &kSecret), WireVerdict::kOk);
  EXPECT_EQ(kStamp.secretOf(bytes.data()), kSecret);
  // The bytes the layout does not name are the plugin's: left alone.
  EXPECT_EQ(bytes[4], 0xee);
  EXPECT_EQ(bytes[5], 0xee);
  EXPECT_EQ(bytes[16], 0xee);
  uint32_t magic = 0;
  std::memcpy(&magic, bytes.data(), sizeof(magic));
  EXPECT_EQ(magic, 0x7364'6b74u);  // host order, as a memcpy'd struct reads it
}

TEST(WireStamp, WithoutExpectedSecretTheSecretIsNotJudged) {
  std::vector<uint8_t> bytes = written();
  EXPECT_EQ(kStamp.check(bytes.data(), bytes.size()), WireVerdict::kOk);
}

TEST(WireStamp, EachRejection) {
  std::vector<uint8_t> bytes = written();
  bytes[0] ^= 1;
  EXPECT_EQ(kStamp.check(bytes.data(), bytes.size(), &kSecret), WireVerdict::kNotOurs);
  EXPECT_NE(kStamp.explain(WireVerdict::kNotOurs, bytes.data(), bytes.size()).find("wrong magic"),
            std::string::npos);

  bytes = written();
  bytes[6] = 4;
  EXPECT_EQ(kStamp.check(bytes.data(), bytes.size(), &kSecret), WireVerdict::kWrongVersion);
  EXPECT_EQ(kStamp.explain(WireVerdict::kWrongVersion, bytes.data(), bytes.size()),
            "a handshake of sdk-test wire version 4, this one speaks 3 (mixed sdk-test versions "
            "in one job)");

  bytes = written();
  uint64_t other = kSecret + 1;
  EXPECT_EQ(kStamp.check(bytes.data(), bytes.size(), &other), WireVerdict::kWrongSecret);
  EXPECT_NE(kStamp.explain(WireVerdict::kWrongSecret, bytes.data(), bytes.size()).find("secret"),
            std::string::npos);
}

TEST(WireStamp, OrderMagicThenVersionThenSecret) {
  std::vector<uint8_t> bytes = written();
  bytes[0] ^= 1;
  bytes[6] = 4;
  uint64_t other = kSecret + 1;
  EXPECT_EQ(kStamp.check(bytes.data(), bytes.size(), &other), WireVerdict::kNotOurs);
  bytes = written();
  bytes[6] = 4;
  EXPECT_EQ(kStamp.check(bytes.data(), bytes.size(), &other), WireVerdict::kWrongVersion);
}

TEST(WireStamp, TruncatedInputIsNotRead) {
  std::vector<uint8_t> bytes = written();
  for (size_t n = 0; n < kStamp.bytes(); n++) {
    // A copy of exactly n bytes: reading past it would show under ASan.
    std::vector<uint8_t> shortCopy(bytes.begin(), bytes.begin() + n);
    EXPECT_EQ(kStamp.check(shortCopy.data(), n, &kSecret), WireVerdict::kTruncated) << n;
  }
  EXPECT_EQ(kStamp.explain(WireVerdict::kTruncated, bytes.data(), 3),
            "a handshake of 3 bytes, shorter than sdk-test's 16-byte stamp");
}

TEST(WireStamp, AbsentFieldsAreSkipped) {
  // A handle with a magic only (no version, no secret).
  constexpr WireStamp kMagicOnly{"sdk-test", "listen handle", 0x4f46'4931, 0, {{0, 4}, {}, {}}};
  uint8_t bytes[8] = {};
  kMagicOnly.write(bytes, 99);
  uint64_t anySecret = 5;
  EXPECT_EQ(kMagicOnly.bytes(), 4u);
  EXPECT_EQ(kMagicOnly.check(bytes, sizeof(bytes), &anySecret), WireVerdict::kOk);
  EXPECT_EQ(kMagicOnly.secretOf(bytes), 0u);
  EXPECT_EQ(bytes[4], 0);  // the absent secret wrote nothing
}

TEST(WireStamp, MalformedCarriesThePluginsDetail) {
  std::vector<uint8_t> bytes = written();
  EXPECT_EQ(kStamp.explain(WireVerdict::kMalformed, bytes.data(), bytes.size(), "17 QPs"),
            "a malformed handshake of sdk-test: 17 QPs");
}

TEST(WireStamp, ResultPolicy) {
  for (WireVerdict v : {WireVerdict::kTruncated, WireVerdict::kNotOurs, WireVerdict::kWrongVersion,
                        WireVerdict::kWrongSecret, WireVerdict::kMalformed}) {
    EXPECT_EQ(ncclnet::wireResult(v, WireSource::kHandle), ncclInvalidUsage);
    EXPECT_EQ(ncclnet::wireResult(v, WireSource::kAnswer), ncclRemoteError);
  }
  EXPECT_EQ(ncclnet::wireResult(WireVerdict::kOk, WireSource::kHandle), ncclSuccess);
  EXPECT_EQ(ncclnet::wireResult(WireVerdict::kOk, WireSource::kAnswer), ncclSuccess);
}

}  // namespace
