// SPDX-License-Identifier: Apache-2.0
// Scenario tests registered at run time (the catalogue and the versions are
// only known once the plugin is probed).
#include "suite.hpp"

#include <gtest/gtest.h>

#include <optional>

#include "harness/verdict.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

// A peer-death scenario (rule 50) that already warned in this run, at
// another ABI version: the test of a plugin that does not notice a dead
// peer lasts its whole bound (peerDeathLimit), and repeating it through
// each table adds minutes, not information: the tables only convert
// arguments on the way to the same transport (NCCL's src/plugin/net/
// net_v*.cc adapters pass isend, irecv and test through), so a dead peer
// goes unnoticed under every one of them.
const TestResult* peerDeathAlreadyWarned(const Report& report, const Scenario& scenario) {
  if (scenario.rule != Rule::PeerDeathSurfaces) return nullptr;
  for (const TestResult& earlier : report.results) {
    if (earlier.scenario == scenario.fullName() && earlier.verdict == Verdict::Warn)
      return &earlier;
  }
  return nullptr;
}

class ScenarioTest : public testing::Test {
 public:
  ScenarioTest(Suite* suite, const Scenario* scenario, int version)
      : suite_(suite), scenario_(scenario), version_(version) {}

  void TestBody() override {
    TestResult r;
    r.scenario = scenario_->fullName();
    r.test = "v" + std::to_string(version_) + "/" + r.scenario;
    r.version = version_;
    r.rule = scenario_->rule;
    Options alone = suite_->run;
    alone.abi = "v" + std::to_string(version_);
    r.rerun = rerunCommand(alone, r.test);
    const Profile& profile = suite_->config->profile;
    if (auto why = profile.exclusionFor(r.scenario)) {
      r.verdict = Verdict::Excluded;
      r.reason = "excluded by " + profile.path + ": " + *why;
    } else if (auto unmet = unmetBeforeStart()) {
      r.verdict = Verdict::NotRun;
      r.reason = *unmet;
    } else if (const TestResult* earlier = peerDeathAlreadyWarned(*suite_->report, *scenario_)) {
      r.verdict = Verdict::NotRun;
      r.reason = "not repeated: " + earlier->test +
                 " already showed the peer's death going unnoticed (rule 50, a warning), and "
                 "every ABI table leads to the same transport";
    } else {
      RunRequest request{r.scenario, version_, ranks(), scaledDeadline(*suite_->config, r.scenario),
                         scenario_->rule};
      Outcome outcome = suite_->coordinator->run(request);
      r.verdict = outcome.verdict;
      r.reason = outcome.reason;
      r.notes = outcome.notes;
      r.counters = outcome.counters;
      r.seconds = outcome.seconds;
    }
    suite_->report->results.push_back(r);
    RecordProperty("rule", ruleLabel(r.rule));
    RecordProperty("verdict", verdictName(r.verdict));
    if (!r.reason.empty()) RecordProperty("reason", r.reason);
    // Which verdicts fail the gtest is countsAsFailure's call, as for the
    // JUnit report and the exit status; the rest skip or pass.
    bool strict = suite_->report->strict;
    if (countsAsFailure(r.verdict, strict)) {
      if (r.verdict == Verdict::Warn) {
        ADD_FAILURE() << "a SHOULD rule is broken, which --strict counts as a failure: " << r.reason
                      << "\n  rerun: " << r.rerun;
      } else if (r.verdict == Verdict::NotRun) {
        ADD_FAILURE() << "not run, which --strict counts as a failure: " << r.reason;
      } else {
        ADD_FAILURE() << r.reason << "\n  rerun: " << r.rerun;
      }
    } else if (r.verdict == Verdict::NotRun || r.verdict == Verdict::Excluded) {
      GTEST_SKIP() << r.reason;
    }
  }

 private:
  // The scenario's requirements, judged on what the probe learned: a
  // scenario that cannot run here starts no process.
  std::optional<std::string> unmetBeforeStart() const {
    Capabilities caps = suite_->report->plugin.capabilities;
    caps.version = version_;
    return unmetRequirement(scenario_->needs, caps, 0, ranks());
  }

  int ranks() const {
    return scenario_->ranks == kRanksOfTheTrace ? suite_->config->profile.replayRanks
                                                : scenario_->ranks;
  }

  Suite* suite_;
  const Scenario* scenario_;
  int version_;
};

}  // namespace

int registerSuite(Suite* suite, const std::vector<int>& versions) {
  int count = 0;
  for (int version : versions) {
    for (const Scenario& s : catalogue()) {
      if (!suite->config->profile.includes(s.fullName())) continue;
      // --replay runs the recorded traces and nothing else; without it
      // there is nothing to replay.
      bool replaying = !suite->config->profile.replayDir.empty();
      if (replaying != (s.fullName() == kRecordedReplay)) continue;
      std::string suiteName = "v" + std::to_string(version) + "/" + s.area;
      const Scenario* scenario = &s;
      testing::RegisterTest(
          suiteName.c_str(), s.name, nullptr, nullptr, __FILE__, __LINE__,
          [=]() -> testing::Test* { return new ScenarioTest(suite, scenario, version); });
      count++;
    }
  }
  return count;
}

}  // namespace conformance
