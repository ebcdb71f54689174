// SPDX-License-Identifier: Apache-2.0
// A small streaming JSON writer for the report (two-space indentation).
#pragma once

#include <string>
#include <vector>

namespace conformance {

class JsonWriter {
 public:
  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(const std::string& k);
  JsonWriter& value(const std::string& s);
  JsonWriter& value(const char* s) { return value(std::string(s)); }
  JsonWriter& value(double d);
  JsonWriter& value(long long n);
  JsonWriter& value(int n) { return value(static_cast<long long>(n)); }
  JsonWriter& value(bool b);
  JsonWriter& null();
  // Already-encoded JSON (e.g. from the probe process).
  JsonWriter& raw(const std::string& json);
  const std::string& str() const { return out_; }

  static std::string quote(const std::string& s);

 private:
  void separate();
  void newline();
  std::string out_;
  std::vector<bool> first_;
  bool afterKey_ = false;
};

}  // namespace conformance
