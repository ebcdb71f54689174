// SPDX-License-Identifier: Apache-2.0
// The contract rules a scenario checks, numbered as in the net-plugin
// contract checklist (docs/conformance.md), so a failure names the rule.
#pragma once

#include <string>

namespace conformance {

// 1..40: the contract checklist. 100 + n is field rule Fn, a failure seen in
// the field that the checklist does not number (n: its row in the pain-point
// table of the landscape notes, 16 for the negative tests); 0 is an
// expectation written in the profile.
constexpr int kRuleProfile = 0;
constexpr int kRulePeerDeath = 108;
constexpr int kRuleCloseInFlight = 112;
constexpr int kRuleLeaks = 113;
constexpr int kRuleErrorPaths = 116;

// "rule 30 (tags route a send into a buffer of the oldest grouped receive)".
std::string ruleLabel(int rule);
// The short title alone (docs and the JSON report).
const char* ruleTitle(int rule);

}  // namespace conformance
