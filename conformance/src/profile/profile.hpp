// SPDX-License-Identifier: Apache-2.0
// Profiles: what a vendor's CI runs and expects, as YAML (see
// conformance/profiles/default.yaml for every key, documented). A malformed
// profile is rejected with its line and the reason, never half-applied.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ncclnet/abi/net.h"

namespace conformance {

// One check of a device property: "speed >= 400000", "ptrSupport includes CUDA".
struct PropertyCheck {
  std::string field;
  std::string op;    // >= > <= < == != includes excludes
  double value = 0;  // numeric comparisons
  int ptrMask = 0;   // includes / excludes
  std::string text;  // as written, for messages
  int line = 0;
};

// The checks for the devices whose name matches `match` (a glob).
struct DeviceExpectation {
  std::string match = "*";
  std::vector<PropertyCheck> checks;
  int line = 0;
};

struct Profile {
  std::string path = "(built-in defaults)";
  std::string description;
  std::optional<std::string> plugin;  // name or path; the command line wins
  std::optional<std::string> abi;     // all | vN
  std::optional<std::string> nccl;    // 2.23 | 2.28 | 2.30
  std::map<std::string, std::string> env;
  std::vector<std::string> include{"*"};       // globs over Area.Name
  std::map<std::string, std::string> exclude;  // glob -> reason (a known deviation)
  std::map<std::string, double> deadlines;     // glob -> seconds
  double deadlineSec = 30;
  double timeScale = 1;
  // How long a request may stay pending after its peer died (rule 50),
  // before the time scale; scenarios that wait for it get a deadline beyond.
  double peerDeathSec = 35;
  bool strict = false;  // NotRun counts as a failure
  // What plays NCCL's kernels in the Transport scenarios: "cpu" (a thread on
  // host memory) or "cuda" (kernels on GPU rank % count). --device wins.
  std::string device = "cpu";
  // --replay DIR: the recorded traces Replay.Recorded plays (one rank per
  // file), and how many files rank 0 found there.
  std::string replayDir;
  int replayRanks = 0;
  std::vector<size_t> sizes{0, 1, 7, 8, 4095, 4096, 4097, 65536, 1048579, 4194304};
  size_t largeSize = size_t(1) << 30;
  int iterations = 3;
  int manyComms = 64;
  int minDevices = 1;
  std::vector<DeviceExpectation> expect;

  // The scenario's deadline (a matching `deadlines` entry, else the default),
  // before the time scale.
  double deadlineFor(const std::string& scenario) const;
  // The reason when `scenario` is excluded, else nullopt.
  std::optional<std::string> exclusionFor(const std::string& scenario) const;
  bool includes(const std::string& scenario) const;
};

// Parses `path`. On error returns false with "<path>:<line>: <reason>".
bool loadProfile(const std::string& path, Profile* out, std::string* error);

// Checks one property; returns "" when it holds, else what was found.
std::string evaluate(const PropertyCheck& check, const ncclNetProperties_v12_t& props);

bool globMatch(const std::string& pattern, const std::string& text);

}  // namespace conformance
