// SPDX-License-Identifier: Apache-2.0
// JSON report.
#include "report/report.hpp"

#include <fstream>

#include "json_text.hpp"
#include "scenario/rules.hpp"

namespace conformance {

using ncclnet::json::Json;

const TestResult* Report::find(const std::string& test) const {
  for (const TestResult& r : results) {
    if (r.test == test) return &r;
  }
  return nullptr;
}

int Report::count(Verdict v) const {
  int n = 0;
  for (const TestResult& r : results) n += r.verdict == v;
  return n;
}

std::map<std::string, uint64_t> Report::counterTotals() const {
  std::map<std::string, uint64_t> totals;
  for (const TestResult& r : results) {
    for (const auto& [name, value] : r.counters) totals[name] += value;
  }
  return totals;
}

namespace {

Json provenanceJson(const Provenance& p) {
  Json j = Json::object();
  j["tool"] = p.tool;
  j["toolVersion"] = p.toolVersion;
  j["sdkVersion"] = p.toolVersion;
  j["gitCommit"] = p.gitCommit;
  j["utcTime"] = p.utcTime;
  j["host"] = p.host;
  j["pluginSha256"] = p.pluginSha256;
  j["profileSha256"] = p.profileSha256;
  Json environment = Json::object();
  for (const auto& [name, value] : p.environment) environment[name] = value;
  j["environment"] = environment;
  return j;
}

Json countersJson(const std::map<std::string, uint64_t>& counters) {
  Json j = Json::object();
  for (const auto& [name, value] : counters) j[name] = value;
  return j;
}

// The probe's devices, written by the child as JSON text; anything else
// (a probe that never got as far) is no devices.
Json devicesJson(const std::string& text) {
  Json devices = Json::parse(text, nullptr, false);
  return devices.is_array() ? devices : Json::array();
}

}  // namespace

bool Report::passed() const {
  for (const TestResult& r : results) {
    if (countsAsFailure(r.verdict, strict)) return false;
  }
  return true;
}

const char* TestResult::severity() const {
  // A warning is a SHOULD finding and a failure a MUST one, whatever the
  // scenario's main rule (a scenario may check several).
  if (verdict == Verdict::Warn) return severityName(Severity::Should);
  if (verdict == Verdict::Fail) return severityName(Severity::Must);
  return severityName(ruleInfo(rule).severity);
}

bool Report::writeJson(const std::string& path, std::string* error) const {
  Json j = Json::object();
  j["tool"] = "ncclnet-conformance";
  j["result"] = passed() ? "pass" : "fail";
  j["provenance"] = provenanceJson(provenance);
  Json p = Json::object();
  p["request"] = request;
  p["loaded"] = plugin.loaded;
  if (!plugin.loaded) p["error"] = plugin.error;
  p["path"] = plugin.path;
  p["name"] = plugin.name;
  p["exportedVersions"] = plugin.exported;
  p["selectedVersion"] = plugin.selectedVersion;
  p["devices"] = devicesJson(plugin.devicesJson);
  j["plugin"] = p;
  j["profile"] = profilePath;
  j["ncclWindow"] = ncclWindow;
  j["abiVersions"] = versions;
  j["worldSize"] = worldSize;
  j["strict"] = strict;
  Json summary = Json::object();
  for (Verdict v :
       {Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::NotRun, Verdict::Excluded}) {
    summary[verdictName(v)] = count(v);
  }
  summary["seconds"] = seconds;
  summary["counters"] = countersJson(counterTotals());
  j["summary"] = summary;
  Json scenarios = Json::array();
  for (const TestResult& r : results) {
    Json s = Json::object();
    s["test"] = r.test;
    s["scenario"] = r.scenario;
    s["abi"] = r.version;
    s["rule"] = ruleLabel(r.rule);
    s["ruleName"] = ruleInfo(r.rule).name;
    s["severity"] = r.severity();
    s["verdict"] = verdictName(r.verdict);
    s["reason"] = r.reason;
    s["notes"] = r.notes;
    if (!r.counters.empty()) s["counters"] = countersJson(r.counters);
    s["seconds"] = r.seconds;
    s["rerun"] = r.rerun;
    scenarios.push_back(s);
  }
  j["scenarios"] = scenarios;
  std::ofstream out(path);
  out << ncclnet::json::jsonText(j) << "\n";
  if (!out) {
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace conformance
