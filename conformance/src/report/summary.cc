// SPDX-License-Identifier: Apache-2.0
// Reports read back.
#include "report/summary.hpp"

#include <cstdio>
#include <fstream>

#include "json_text.hpp"

#include "report/progress.hpp"

namespace conformance {

using ncclnet::json::Json;

namespace {

bool verdictOf(const std::string& name, Verdict* out) {
  for (Verdict v :
       {Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::NotRun, Verdict::Excluded}) {
    if (name == verdictName(v)) {
      *out = v;
      return true;
    }
  }
  return false;
}

// A time in seconds; a non-finite one was written as null.
double secondsOf(const Json& object) {
  if (!object.is_object() || !object.contains("seconds")) return 0;
  const Json& seconds = object["seconds"];
  return seconds.is_number() ? seconds.get<double>() : 0;
}

}  // namespace

bool readReport(const std::string& path, Report* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot be read";
    return false;
  }
  // Without exceptions: a file that is not JSON parses to `discarded`.
  Json root = Json::parse(in, nullptr, false);
  auto isReport = [&] {
    return root.is_object() && root.contains("tool") && root["tool"] == "ncclnet-conformance" &&
           root.contains("scenarios") && root["scenarios"].is_array();
  };
  if (root.is_discarded() || !isReport()) {
    *error = path + ": not an ncclnet-conformance JSON report";
    return false;
  }
  Report report;
  try {
    report.strict = root.value("strict", false);
    report.seconds = secondsOf(root.value("summary", Json::object()));
    report.profilePath = root.value("profile", "");
    for (const Json& s : root["scenarios"]) {
      TestResult r;
      r.test = s.value("test", "");
      r.scenario = s.value("scenario", "");
      r.version = s.value("abi", 0);
      r.reason = s.value("reason", "");
      r.seconds = secondsOf(s);
      if (!verdictOf(s.value("verdict", ""), &r.verdict)) {
        *error = path + ": " + r.test + " has no verdict the suite gives";
        return false;
      }
      if (s.contains("counters") && s["counters"].is_object()) {
        for (const auto& [name, value] : s["counters"].items())
          r.counters[name] = value.get<uint64_t>();
      }
      report.results.push_back(r);
    }
  } catch (const Json::exception& e) {
    // A member of the wrong type: value() and get() check, and say which.
    *error = path + ": not an ncclnet-conformance JSON report: " + e.what();
    return false;
  }
  *out = report;
  return true;
}

int printReportSummaries(const std::vector<std::string>& paths, bool verbose) {
  int status = 0;
  for (const std::string& path : paths) {
    Report report;
    std::string error;
    if (!readReport(path, &report, &error)) {
      std::fprintf(stderr, "ncclnet-conformance: %s\n", error.c_str());
      status = 2;
      continue;
    }
    std::printf("%s: %s\n", path.c_str(), resultLine(report).c_str());
    if (!report.passed() && status == 0) status = 1;
    if (!verbose) continue;
    for (const TestResult& r : report.results) {
      if (r.verdict != Verdict::Pass)
        std::printf("  %-8s %s: %s\n", verdictName(r.verdict), r.test.c_str(), r.reason.c_str());
    }
    std::map<std::string, uint64_t> counters = report.counterTotals();
    if (counters.empty()) continue;
    std::printf("  counters:");
    for (const auto& [name, value] : counters)
      std::printf(" %s=%llu", name.c_str(), static_cast<unsigned long long>(value));
    std::printf("\n");
  }
  return status;
}

}  // namespace conformance
