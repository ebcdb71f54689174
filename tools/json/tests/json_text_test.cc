// SPDX-License-Identifier: Apache-2.0
// The reports' JSON dialect: always valid, numbers as their type.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "json_text.hpp"

namespace ncclnet::json {
namespace {

TEST(JsonText, KeepsMembersInInsertionOrder) {
  Json j = Json::object();
  j["tool"] = "t";
  j["result"] = "pass";
  j["abi"] = 12;
  EXPECT_EQ(jsonText(j), "{\n  \"tool\": \"t\",\n  \"result\": \"pass\",\n  \"abi\": 12\n}");
}

TEST(JsonText, WritesNonFiniteNumbersAsNull) {
  Json j = Json::array({std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity(), 0.5});
  EXPECT_EQ(jsonText(j), "[\n  null,\n  null,\n  null,\n  0.5\n]");
}

TEST(JsonText, KeepsIntegersIntegers) {
  Json j = Json::array({uint64_t{0x8000000000000001}, int64_t{-3}, uint64_t{1} << 40});
  EXPECT_EQ(jsonText(j), "[\n  9223372036854775809,\n  -3,\n  1099511627776\n]");
}

TEST(JsonText, EscapesQuotesAndControlCharacters) {
  EXPECT_EQ(jsonText(Json("a\"b\\c")), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(jsonText(Json("\n\t\x01")), "\"\\n\\t\\u0001\"");
}

TEST(JsonText, KeepsValidUtf8) {
  EXPECT_EQ(jsonText(Json("\xc3\xa9\xf0\x9f\x98\x80")), "\"\xc3\xa9\xf0\x9f\x98\x80\"");
}

TEST(JsonText, ReplacesInvalidUtf8) {
  const std::string replacement = "\xef\xbf\xbd";  // U+FFFD
  EXPECT_EQ(jsonText(Json("a\xff"
                          "b")),
            "\"a" + replacement + "b\"");              // never a UTF-8 byte
  std::string truncated = jsonText(Json("\xe2\x82"));  // truncated sequence
  EXPECT_NE(truncated.find(replacement), std::string::npos) << truncated;
  EXPECT_TRUE(Json::accept(truncated)) << truncated;
}

TEST(JsonText, WritesAbsentStringsAsNull) {
  EXPECT_EQ(jsonText(stringOrNull(std::nullopt)), "null");
  EXPECT_EQ(jsonText(stringOrNull(std::string("x"))), "\"x\"");
}

}  // namespace
}  // namespace ncclnet::json
