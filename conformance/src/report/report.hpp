// SPDX-License-Identifier: Apache-2.0
// The run's results and the JSON report: plugin identity, exported versions,
// every device's properties, and a verdict with reason and timing for each
// scenario and ABI version.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/coordinator.hpp"
#include "probe.hpp"
#include "report/provenance.hpp"
#include "scenario/rules.hpp"

namespace conformance {

struct TestResult {
  std::string test;      // gtest name: v12/Data.TruncationIsAnError
  std::string scenario;  // Data.TruncationIsAnError
  int version = 0;
  Rule rule = Rule::ProfileExpectation;
  Verdict verdict = Verdict::Pass;
  std::string reason;
  std::vector<std::string> notes;
  double seconds = 0;
  std::string rerun;  // the command that runs it alone
  // What the ranks counted, e.g. cudaRegistrations, dmabufRegistrations.
  std::map<std::string, uint64_t> counters{};

  const char* severity() const;  // "MUST" or "SHOULD"
};

struct Report {
  Provenance provenance;
  std::string request;  // the --plugin value
  PluginInfo plugin;
  std::string profilePath;
  std::string ncclWindow;  // "v6..v12"
  std::vector<int> versions;
  int worldSize = 1;
  bool strict = false;
  std::vector<TestResult> results;
  double seconds = 0;

  const TestResult* find(const std::string& test) const;
  int count(Verdict v) const;
  std::map<std::string, uint64_t> counterTotals() const;
  bool passed() const;
  bool writeJson(const std::string& path, std::string* error) const;
};

}  // namespace conformance
