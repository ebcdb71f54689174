// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host): the JSON writer.
#include "ncclnet/host/json_writer.hpp"

#include <cassert>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace ncclnet::host {

namespace {

// Length of the UTF-8 sequence starting at s[i], or 0 if it is not valid
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t utf8Length(const std::string& s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
  for (size_t k = 1; k < n; k++) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

}  // namespace

std::string JsonWriter::quote(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        i++;
        continue;
      case '\\':
        out += "\\\\";
        i++;
        continue;
      case '\n':
        out += "\\n";
        i++;
        continue;
      case '\r':
        out += "\\r";
        i++;
        continue;
      case '\t':
        out += "\\t";
        i++;
        continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
      i++;
      continue;
    }
    size_t n = utf8Length(s, i);
    if (n == 0) {
      out += "\\ufffd";
      i++;
      continue;
    }
    out.append(s, i, n);
    i += n;
  }
  return out + "\"";
}

void JsonWriter::newline() {
  out_ << '\n' << std::string(2 * hasMember_.size(), ' ');
}

void JsonWriter::beforeValue() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (hasMember_.empty()) return;  // the top-level value
  if (hasMember_.back()) out_ << ',';
  hasMember_.back() = true;
  newline();
}

JsonWriter& JsonWriter::beginObject() {
  beforeValue();
  out_ << '{';
  hasMember_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::endObject() {
  assert(!hasMember_.empty() && "endObject without beginObject");
  bool any = hasMember_.back();
  hasMember_.pop_back();
  if (any) newline();
  out_ << '}';
  return *this;
}

JsonWriter& JsonWriter::beginArray() {
  beforeValue();
  out_ << '[';
  hasMember_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::endArray() {
  assert(!hasMember_.empty() && "endArray without beginArray");
  bool any = hasMember_.back();
  hasMember_.pop_back();
  if (any) newline();
  out_ << ']';
  return *this;
}

JsonWriter& JsonWriter::key(const std::string& name) {
  assert(!afterKey_ && "two keys in a row");
  beforeValue();
  out_ << quote(name) << ": ";
  afterKey_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(const std::string& s) {
  beforeValue();
  out_ << quote(s);
  return *this;
}

JsonWriter& JsonWriter::value(const char* s) {
  return s == nullptr ? null() : value(std::string(s));
}

JsonWriter& JsonWriter::value(const std::optional<std::string>& s) {
  return s ? value(*s) : null();
}

JsonWriter& JsonWriter::value(bool b) {
  beforeValue();
  out_ << (b ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::signedValue(long long v) {
  beforeValue();
  out_ << v;
  return *this;
}

JsonWriter& JsonWriter::unsignedValue(unsigned long long v) {
  beforeValue();
  out_ << v;
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  if (!std::isfinite(v)) return null();
  beforeValue();
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  out_ << buf;
  return *this;
}

JsonWriter& JsonWriter::null() {
  beforeValue();
  out_ << "null";
  return *this;
}

JsonWriter& JsonWriter::raw(const std::string& json) {
  beforeValue();
  out_ << json;
  return *this;
}

}  // namespace ncclnet::host
