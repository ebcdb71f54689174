// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: a minimal streaming JSON writer (objects, arrays, strings,
// numbers, booleans, null) with correct escaping, and nothing else.
//
//   JsonWriter w(std::cout);
//   w.beginObject();
//   w.key("name").value("sdk-testnet");
//   w.key("devices").beginArray().value(1).value(2).endArray();
//   w.endObject();
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ncclnet::info {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(const std::string& name);

  JsonWriter& value(const std::string& s);
  JsonWriter& value(const char* s);  // NULL is written as null
  JsonWriter& value(const std::optional<std::string>& s);
  JsonWriter& value(bool b);
  JsonWriter& value(int64_t v);
  JsonWriter& value(uint64_t v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(double v);  // NaN and infinities have no JSON form: null
  JsonWriter& null();

  // The JSON string literal for `s`, quotes included. Bytes that are not
  // valid UTF-8 become U+FFFD, so the output is always valid JSON.
  static std::string quote(const std::string& s);

 private:
  void beforeValue();
  void newline();

  std::ostream& out_;
  // One entry per open container: whether it has a member yet.
  std::vector<bool> hasMember_;
  bool afterKey_ = false;
};

}  // namespace ncclnet::info
