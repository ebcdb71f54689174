// SPDX-License-Identifier: Apache-2.0
// Reports read back. A JSON report is also YAML, so the profile's parser
// reads it.
#include "report/summary.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdio>

#include "report/progress.hpp"

namespace conformance {

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

}  // namespace

bool readReport(const std::string& path, Report* out, std::string* error) {
  Report report;
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (!root.IsMap() || root["tool"].as<std::string>("") != "ncclnet-conformance" ||
        !root["scenarios"].IsSequence()) {
      *error = path + ": not an ncclnet-conformance JSON report";
      return false;
    }
    report.strict = root["strict"].as<bool>(false);
    report.seconds = root["summary"]["seconds"].as<double>(0);
    report.profilePath = root["profile"].as<std::string>("");
    for (const YAML::Node& s : root["scenarios"]) {
      TestResult r;
      r.test = s["test"].as<std::string>("");
      r.scenario = s["scenario"].as<std::string>("");
      r.version = s["abi"].as<int>(0);
      r.reason = s["reason"].as<std::string>("");
      r.seconds = s["seconds"].as<double>(0);
      if (!verdictOf(s["verdict"].as<std::string>(""), &r.verdict)) {
        *error = path + ": " + r.test + " has no verdict the suite gives";
        return false;
      }
      // A key that is absent reads as an invalid node, which must not be asked its type.
      if (s["counters"].IsDefined() && s["counters"].IsMap()) {
        for (const auto& c : s["counters"])
          r.counters[c.first.as<std::string>()] = c.second.as<uint64_t>();
      }
      report.results.push_back(r);
    }
  } catch (const YAML::BadFile&) {
    *error = path + ": cannot be read";
    return false;
  } catch (const YAML::Exception& e) {
    *error = path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg;
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
