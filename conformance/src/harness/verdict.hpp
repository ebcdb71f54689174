// SPDX-License-Identifier: Apache-2.0
// Verdicts: how each rank of a test ended, and the one function that turns
// those ends into the test's verdict. A rank reports what it saw (a rule it
// found broken, a capability it lacks, a peer it lost); the coordinator adds
// what it saw of the ranks (a crash, a rank that vanished, the deadline).
// Whether a broken rule fails the test or only warns is decided here, from
// the rule's severity (docs/contract.md), and nowhere else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenario/rules.hpp"

namespace conformance {

// Warn: only SHOULD rules were broken; a pass unless --strict.
enum class Verdict { Pass, Warn, Fail, NotRun, Excluded };
const char* verdictName(Verdict v);

// Whether `v` fails the run: a failure, and under --strict a warning or a
// test that did not run too.
bool countsAsFailure(Verdict v, bool strict);

// How one rank ended. The numbers travel on the control channel.
enum class RankEnd : uint32_t {
  Passed = 0,
  BrokeRule = 1,  // `rule` is broken
  Skipped = 2,    // a capability is absent
  LostPeer = 3,   // it gave up because another rank failed or hung
};

struct RankResult {
  RankEnd end = RankEnd::Passed;
  Rule rule = Rule::ProfileExpectation;  // BrokeRule: the rule broken
  // Fails whatever the rule's severity: a crash in the setup of a SHOULD
  // scenario (connect, regMr, a transfer: NCCL's ordinary path), or an
  // exception no check threw.
  bool alwaysFails = false;
  std::string text;  // the finding, starting with the rule it breaks
};

// The test's verdict and reason from its ranks' results, earliest first.
// A failure outranks a warning, a warning a skip, and a skip the ranks that
// merely lost the peer that skipped (or that warned and left). Failures,
// warnings and lost peers are all listed; of skips, the first.
Verdict judge(const std::vector<RankResult>& results, std::string* reason);

}  // namespace conformance
