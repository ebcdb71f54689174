// SPDX-License-Identifier: Apache-2.0
// Progress line and summary.
#include "report/progress.hpp"

#include <cstdio>
#include <map>

namespace conformance {

Progress::Progress(const Report& report, bool verbose, bool redraw)
    : report_(report), verbose_(verbose), redraw_(redraw) {}

void Progress::OnTestProgramStart(const testing::UnitTest& unit) {
  total_ = unit.test_to_run_count();
}

void Progress::OnTestStart(const testing::TestInfo& info) {
  if (!redraw_) return;
  std::printf("\r\033[K[%3d/%d] %d failed · %s.%s", done_ + 1, total_, failed_,
              info.test_suite_name(), info.name());
  std::fflush(stdout);
}

void Progress::OnTestEnd(const testing::TestInfo& info) {
  done_++;
  std::string test = std::string(info.test_suite_name()) + "." + info.name();
  const TestResult* r = report_.find(test);
  bool failed = info.result()->Failed();
  bool warned = r != nullptr && r->verdict == Verdict::Warn;
  failed_ += failed;
  if (redraw_) std::printf("\r\033[K");
  if (failed || warned || verbose_) {
    std::printf("%-8s %s (%.2f s)\n", r ? verdictName(r->verdict) : (failed ? "fail" : "pass"),
                test.c_str(), r ? r->seconds : 0.0);
    if ((failed || warned) && r) std::printf("         %s\n", r->reason.c_str());
  } else if (!redraw_ && total_ >= 10 && done_ % (total_ / 10) == 0) {
    std::printf("[%3d/%d] %d failed\n", done_, total_, failed_);
  }
  std::fflush(stdout);
}

std::string resultLine(const Report& report) {
  std::string strictNote;
  if (report.strict && report.count(Verdict::Warn) + report.count(Verdict::NotRun) > 0)
    strictNote = " (--strict: warnings and notrun count as failures)";
  else if (report.count(Verdict::Warn) > 0)
    strictNote = " (warnings: SHOULD rules, docs/contract.md; --strict fails them)";
  char line[256];
  std::snprintf(line, sizeof(line),
                "%s: %d pass, %d warn, %d fail, %d notrun, %d excluded in %.1f s",
                report.passed() ? "PASS" : "FAIL", report.count(Verdict::Pass),
                report.count(Verdict::Warn), report.count(Verdict::Fail),
                report.count(Verdict::NotRun), report.count(Verdict::Excluded), report.seconds);
  return line + strictNote;
}

void printSummary(const Report& report, const std::string& jsonPath, const std::string& junitPath) {
  std::map<int, std::map<Verdict, int>> byVersion;
  for (const TestResult& r : report.results) byVersion[r.version][r.verdict]++;
  if (report.plugin.loaded)
    std::printf("\nncclnet-conformance: %s (%s, %s)\n", report.plugin.name.c_str(),
                report.plugin.path.c_str(), report.profilePath.c_str());
  else
    std::printf("\nncclnet-conformance: '%s' did not load (%s)\n", report.request.c_str(),
                report.profilePath.c_str());
  for (auto it = byVersion.rbegin(); it != byVersion.rend(); ++it) {
    if (it->first == 0) continue;  // results before any ABI version (loading)
    auto& c = it->second;
    std::printf("  v%-3d %3d pass  %3d warn  %3d fail  %3d notrun  %3d excluded\n", it->first,
                c[Verdict::Pass], c[Verdict::Warn], c[Verdict::Fail], c[Verdict::NotRun],
                c[Verdict::Excluded]);
  }
  // Warnings first, failures last: the last lines on a terminal are what a
  // reader sees.
  for (Verdict shown : {Verdict::Warn, Verdict::Fail}) {
    for (const TestResult& r : report.results) {
      if (r.verdict != shown) continue;
      std::printf("%s %s\n     %s\n     rerun: %s\n", shown == Verdict::Warn ? "WARN" : "FAIL",
                  r.test.c_str(), r.reason.c_str(), r.rerun.c_str());
    }
  }
  std::printf("%s\n", resultLine(report).c_str());
  if (!jsonPath.empty()) std::printf("JSON report: %s\n", jsonPath.c_str());
  if (!junitPath.empty()) std::printf("JUnit report: %s\n", junitPath.c_str());
}

}  // namespace conformance
