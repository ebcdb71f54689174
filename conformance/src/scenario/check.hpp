// SPDX-License-Identifier: Apache-2.0
// How a scenario reports: a broken rule throws Violation (the message names
// what was expected and what was found), an absent capability throws Skip.
#pragma once

#include <cstdint>
#include <string>

#include "ncclnet/abi/net.h"
#include "ncclnet/result_name.hpp"
#include "scenario/rules.hpp"

namespace conformance {

struct Violation {
  Rule rule;
  std::string message;
};

struct Skip {
  std::string reason;
};

[[noreturn]] void fail(Rule rule, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
[[noreturn]] void skip(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Wall-clock time (ms since the epoch) of this process's first fail(), or
// 0: ranks are ordered by it, since the first to fail is usually the cause.
uint64_t firstFailureMs();

// "ncclInternalError (3)": the SDK's names, as every tool prints them.
using ncclnet::resultText;

}  // namespace conformance

// Fails `rule` unless `cond` holds. The message is formatted only then.
#define CONF_EXPECT(cond, rule, ...)                       \
  do {                                                     \
    if (!(cond)) ::conformance::fail((rule), __VA_ARGS__); \
  } while (0)

// Fails `rule` unless the plugin call returned ncclSuccess.
#define CONF_OK(call, rule, what)                                              \
  do {                                                                         \
    ncclResult_t conf_res_ = (call);                                           \
    if (conf_res_ != ncclSuccess) {                                            \
      ::conformance::fail((rule), "%s returned %s", std::string(what).c_str(), \
                          ::ncclnet::resultText(conf_res_).c_str());           \
    }                                                                          \
  } while (0)
