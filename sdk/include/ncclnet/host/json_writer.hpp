// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host): a minimal streaming JSON writer (objects, arrays,
// strings, numbers, booleans, null) with correct escaping, two-space
// indentation, and nothing else. Reports of every tool use it.
//
//   JsonWriter w(std::cout);   // or JsonWriter w; ... w.str()
//   w.beginObject();
//   w.key("name").value("sdk-testnet");
//   w.key("devices").beginArray().value(1).value(2).endArray();
//   w.endObject();
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace ncclnet::host {

class JsonWriter {
 public:
  JsonWriter() : out_(own_) {}  // into str()
  explicit JsonWriter(std::ostream& out) : out_(out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(const std::string& name);

  JsonWriter& value(const std::string& s);
  JsonWriter& value(const char* s);  // NULL is written as null
  JsonWriter& value(const std::optional<std::string>& s);
  JsonWriter& value(bool b);
  JsonWriter& value(int v) { return signedValue(v); }
  JsonWriter& value(long v) { return signedValue(v); }
  JsonWriter& value(long long v) { return signedValue(v); }
  JsonWriter& value(unsigned v) { return unsignedValue(v); }
  JsonWriter& value(unsigned long v) { return unsignedValue(v); }  // uint64_t: guid
  JsonWriter& value(unsigned long long v) { return unsignedValue(v); }
  JsonWriter& value(double v);  // NaN and infinities have no JSON form: null
  JsonWriter& null();
  // Already-encoded JSON (from another process, say), written as one value.
  JsonWriter& raw(const std::string& json);

  // What was written, when the writer owns its output.
  std::string str() const { return own_.str(); }

  // The JSON string literal for `s`, quotes included. Bytes that are not
  // valid UTF-8 become U+FFFD, so the output is always valid JSON.
  static std::string quote(const std::string& s);

 private:
  void beforeValue();
  void newline();
  JsonWriter& signedValue(long long v);
  JsonWriter& unsignedValue(unsigned long long v);

  std::ostringstream own_;
  std::ostream& out_;
  // One entry per open container: whether it has a member yet.
  std::vector<bool> hasMember_;
  bool afterKey_ = false;
};

}  // namespace ncclnet::host
