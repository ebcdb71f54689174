// SPDX-License-Identifier: Apache-2.0
// A recorded ncclnet-check trace, read back: the header and one record per
// call line, its keys as written (docs/check.md, "The trace").
//
//   RecordedProcess p;
//   std::string error;
//   if (!parseTrace("rank0.trace", text, &p, &error)) ...  // "rank0.trace:3: ..."
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace conformance::replay {

// The oldest trace version that can be replayed (2: listen and connect
// carry the handle hash that pairs them).
constexpr int kReplayableTraceVersion = 2;

struct RecordedCall {
  int line = 0;      // 1-based line number in its file
  std::string text;  // the line without its timestamp, for divergence reports
  std::string call;  // "isend", "test", ...
  std::map<std::string, std::string> keys;

  bool has(const std::string& key) const { return keys.count(key) > 0; }
  // A key's value as a number; `fallback` when it is absent or "-".
  long long number(const std::string& key, long long fallback = 0) const;
  // A comma-separated key ("sizes=1,2"); empty when absent or "-".
  std::vector<long long> numbers(const std::string& key) const;
  int rc() const { return static_cast<int>(number("rc", -1)); }
};

struct RecordedProcess {
  std::string name;  // the file's name
  int version = 0;
  std::string plugin;
  int abi = 0;
  std::vector<RecordedCall> calls;
};

// Parses one trace file's text; false with "<name>:<line>: <why>" on error.
bool parseTrace(const std::string& name, const std::string& text, RecordedProcess* out,
                std::string* error);

}  // namespace conformance::replay
