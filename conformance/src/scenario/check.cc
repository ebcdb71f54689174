// SPDX-License-Identifier: Apache-2.0
// Failure and skip reporting for scenarios.
#include "scenario/check.hpp"

#include <chrono>
#include <cstdarg>
#include <cstdio>

namespace conformance {

namespace {
uint64_t firstFailure = 0;

void noteFailure() {
  if (firstFailure != 0) return;
  firstFailure = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
}

std::string vformat(const char* fmt, va_list args) {
  char text[2048];
  std::vsnprintf(text, sizeof(text), fmt, args);
  return text;
}
}  // namespace

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string s = vformat(fmt, args);
  va_end(args);
  return s;
}

void fail(Rule rule, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string s = vformat(fmt, args);
  va_end(args);
  noteFailure();
  throw Violation{rule, s};
}

void skip(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string s = vformat(fmt, args);
  va_end(args);
  throw Skip{s};
}

uint64_t firstFailureMs() {
  return firstFailure;
}

}  // namespace conformance
