// SPDX-License-Identifier: Apache-2.0
// The hosts' JSON writer escapes everything a plugin may hand it (names and
// log lines are arbitrary bytes), nests correctly, and writes a guid as the
// unsigned 64-bit number it is.
#include "ncclnet/host/json_writer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace ncclnet::host {
namespace {

TEST(JsonWriter, QuotesAndEscapesControlCharacters) {
  EXPECT_EQ(JsonWriter::quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonWriter::quote("\n\r\t"), "\"\\n\\r\\t\"");
  EXPECT_EQ(JsonWriter::quote(std::string("\x01\x1f\x7f", 3)), "\"\\u0001\\u001f\\u007f\"");
}

TEST(JsonWriter, KeepsValidUtf8) {
  EXPECT_EQ(JsonWriter::quote("\xc3\xa9"), "\"\xc3\xa9\"");
  EXPECT_EQ(JsonWriter::quote("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
}

TEST(JsonWriter, ReplacesInvalidUtf8) {
  EXPECT_EQ(JsonWriter::quote("\xff"), "\"\\ufffd\"");                        // never a UTF-8 byte
  EXPECT_EQ(JsonWriter::quote("\xe2\x82"), "\"\\ufffd\\ufffd\"");             // truncated sequence
  EXPECT_EQ(JsonWriter::quote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");             // overlong '/'
  EXPECT_EQ(JsonWriter::quote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
}

TEST(JsonWriter, WritesNestedContainersWithCommas) {
  std::ostringstream out;
  JsonWriter w(out);
  w.beginObject();
  w.key("a").value(1);
  w.key("b").beginArray().value("x").null().beginObject().endObject().endArray();
  w.key("c").beginArray().endArray();
  w.endObject();
  EXPECT_EQ(out.str(),
            "{\n  \"a\": 1,\n  \"b\": [\n    \"x\",\n    null,\n    {}\n  ],\n  \"c\": []\n}");
}

TEST(JsonWriter, NumbersWithoutJsonFormBecomeNull) {
  std::ostringstream out;
  JsonWriter w(out);
  w.beginArray().value(std::nan("")).value(INFINITY).value(1.5).value(uint64_t{~0ull}).endArray();
  EXPECT_EQ(out.str(), "[\n  null,\n  null,\n  1.5,\n  18446744073709551615\n]");
}

TEST(JsonWriter, NullCStringIsNull) {
  std::ostringstream out;
  JsonWriter w(out);
  w.beginArray().value(static_cast<const char*>(nullptr)).endArray();
  EXPECT_EQ(out.str(), "[\n  null\n]");
}

TEST(JsonWriter, GuidIsUnsigned) {
  uint64_t guid = 0xfe80000000000001ull;  // top bit set: negative as int64_t
  JsonWriter w;
  w.beginObject().key("guid").value(guid).endObject();
  EXPECT_EQ(w.str(), "{\n  \"guid\": 18338657682652659713\n}");
}

TEST(JsonWriter, RawJsonIsOneValue) {
  JsonWriter w;
  w.beginArray().raw("{\"a\": 1}").value(2).endArray();
  EXPECT_EQ(w.str(), "[\n  {\"a\": 1},\n  2\n]");
}

}  // namespace
}  // namespace ncclnet::host
