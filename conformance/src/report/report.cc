// SPDX-License-Identifier: Apache-2.0
// JSON report.
#include "report/report.hpp"

#include <fstream>

#include "ncclnet/host/json_writer.hpp"
#include "scenario/rules.hpp"

namespace conformance {

using ncclnet::host::JsonWriter;

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

void writeProvenance(JsonWriter& w, const Provenance& p) {
  w.key("provenance").beginObject();
  w.key("tool").value(p.tool);
  w.key("toolVersion").value(p.toolVersion);
  w.key("sdkVersion").value(p.toolVersion);
  w.key("gitCommit").value(p.gitCommit);
  w.key("utcTime").value(p.utcTime);
  w.key("host").value(p.host);
  w.key("pluginSha256").value(p.pluginSha256);
  w.key("profileSha256").value(p.profileSha256);
  w.key("environment").beginObject();
  for (const auto& [name, value] : p.environment) w.key(name).value(value);
  w.endObject();
  w.endObject();
}

void writeCounters(JsonWriter& w, const std::map<std::string, uint64_t>& counters) {
  w.key("counters").beginObject();
  for (const auto& [name, value] : counters) w.key(name).value(value);
  w.endObject();
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
  JsonWriter w;
  w.beginObject();
  w.key("tool").value("ncclnet-conformance");
  w.key("result").value(passed() ? "pass" : "fail");
  writeProvenance(w, provenance);
  w.key("plugin").beginObject();
  w.key("request").value(request);
  w.key("loaded").value(plugin.loaded);
  if (!plugin.loaded) w.key("error").value(plugin.error);
  w.key("path").value(plugin.path);
  w.key("name").value(plugin.name);
  w.key("exportedVersions").beginArray();
  for (int v : plugin.exported) w.value(v);
  w.endArray();
  w.key("selectedVersion").value(plugin.selectedVersion);
  w.key("devices");
  if (plugin.devicesJson.empty())
    w.raw("[]");
  else
    w.raw(plugin.devicesJson);
  w.endObject();
  w.key("profile").value(profilePath);
  w.key("ncclWindow").value(ncclWindow);
  w.key("abiVersions").beginArray();
  for (int v : versions) w.value(v);
  w.endArray();
  w.key("worldSize").value(worldSize);
  w.key("strict").value(strict);
  w.key("summary").beginObject();
  for (Verdict v :
       {Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::NotRun, Verdict::Excluded}) {
    w.key(verdictName(v)).value(count(v));
  }
  w.key("seconds").value(seconds);
  writeCounters(w, counterTotals());
  w.endObject();
  w.key("scenarios").beginArray();
  for (const TestResult& r : results) {
    w.beginObject();
    w.key("test").value(r.test);
    w.key("scenario").value(r.scenario);
    w.key("abi").value(r.version);
    w.key("rule").value(ruleLabel(r.rule));
    w.key("ruleName").value(ruleInfo(r.rule).name);
    w.key("severity").value(r.severity());
    w.key("verdict").value(verdictName(r.verdict));
    w.key("reason").value(r.reason);
    w.key("notes").beginArray();
    for (const std::string& n : r.notes) w.value(n);
    w.endArray();
    if (!r.counters.empty()) writeCounters(w, r.counters);
    w.key("seconds").value(r.seconds);
    w.key("rerun").value(r.rerun);
    w.endObject();
  }
  w.endArray();
  w.endObject();
  std::ofstream out(path);
  out << w.str() << "\n";
  if (!out) {
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace conformance
