// SPDX-License-Identifier: Apache-2.0
// The one verdict function.
#include "harness/verdict.hpp"

namespace conformance {

const char* verdictName(Verdict v) {
  switch (v) {
    case Verdict::Pass: return "pass";
    case Verdict::Warn: return "warn";
    case Verdict::Fail: return "fail";
    case Verdict::NotRun: return "notrun";
    case Verdict::Excluded: return "excluded";
  }
  return "?";
}

bool countsAsFailure(Verdict v, bool strict) {
  return v == Verdict::Fail || (strict && (v == Verdict::Warn || v == Verdict::NotRun));
}

Verdict judge(const std::vector<RankResult>& results, std::string* reason) {
  std::vector<std::string> failures, warnings, skips, lost;
  for (const RankResult& r : results) {
    switch (r.end) {
      case RankEnd::Passed: break;
      case RankEnd::BrokeRule:
        (isShould(r.rule) && !r.alwaysFails ? warnings : failures).push_back(r.text);
        break;
      case RankEnd::Skipped: skips.push_back(r.text); break;
      case RankEnd::LostPeer: lost.push_back(r.text); break;
    }
  }
  auto joined = [](const std::vector<std::string>& parts) {
    std::string s;
    for (const std::string& p : parts) s += (s.empty() ? "" : " | ") + p;
    return s;
  };
  reason->clear();
  if (!failures.empty()) {
    *reason = joined(failures);
    return Verdict::Fail;
  }
  if (!warnings.empty()) {
    *reason = joined(warnings);
    return Verdict::Warn;
  }
  if (!skips.empty()) {
    *reason = skips.front();
    return Verdict::NotRun;
  }
  if (!lost.empty()) {
    *reason = joined(lost);
    return Verdict::Fail;
  }
  return Verdict::Pass;
}

}  // namespace conformance
