// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the JSON report.
#include "json_report.hpp"

#include "device_json.hpp"
#include "explain.hpp"
#include "json_text.hpp"
#include "ncclnet/result_name.hpp"

namespace ncclnet::info {

using json::Json;

namespace {

// An empty string is "not given": null.
Json nonEmptyOrNull(const std::string& s) {
  return s.empty() ? Json(nullptr) : Json(s);
}
// A version of 0 is "none": null.
Json versionOrNull(int version) {
  return version ? Json(version) : Json(nullptr);
}

Json request(const Inspection& in) {
  const host::LoadReport& r = in.report;
  Json j = Json::object();
  j["pluginList"] = r.pluginList;
  j["pluginListSource"] = r.pluginListSource;
  j["entries"] = r.entries;
  j["net"] = nonEmptyOrNull(r.netName);
  j["nccl"] = nonEmptyOrNull(in.options.nccl);
  j["ncclRelease"] = nonEmptyOrNull(in.options.ncclRelease);
  j["pluginListRule"] = r.nameRules;
  j["pinnedVersion"] = versionOrNull(in.options.pinned);
  j["window"] = {{"oldest", r.oldestVersion}, {"newest", r.newestVersion}};
  return j;
}

Json attempt(const host::LibraryAttempt& a, const host::LoadReport& r) {
  Json j = Json::object();
  j["entry"] = a.entry;
  j["file"] = a.file;
  j["opened"] = a.opened;
  j["error"] = a.opened ? Json(nullptr) : Json(a.error);
  j["path"] = a.opened ? Json(a.path) : Json(nullptr);
  Json symbols = Json::object();
  for (const host::SymbolProbe& p : a.symbols) {
    symbols["ncclNetPlugin_v" + std::to_string(p.version)] = p.found;
  }
  j["symbols"] = symbols;
  j["version"] = versionOrNull(a.version);
  Json skipped = Json::array();
  for (const auto& [version, why] : skippedVersions(a, r.oldestVersion, r.newestVersion)) {
    skipped.push_back({{"version", version}, {"reason", why}});
  }
  j["skipped"] = skipped;
  j["tableName"] = nonEmptyOrNull(a.tableName);
  j["devices"] = a.devices >= 0 ? Json(a.devices) : Json(nullptr);
  j["selected"] = a.selected;
  j["verdict"] = a.verdict;
  return j;
}

const char* slotState(SlotState s) {
  switch (s) {
    case SlotState::Provided: return "provided";
    case SlotState::Null: return "null";
    case SlotState::NotInVersion: return "absent";
  }
  return "?";
}

Json plugin(const PluginInfo& p) {
  Json j = Json::object();
  j["name"] = p.name;
  j["path"] = p.path;
  j["version"] = p.version;
  j["exportedVersions"] = p.exported;
  Json optional = Json::object();
  for (const OptionalSlot& s : p.optional) optional[s.name] = slotState(s.state);
  j["optional"] = optional;
  j["init"] = resultName(p.initResult);
  j["devicesResult"] = resultName(p.devicesResult);
  j["finalize"] = resultName(p.finalizeResult);
  j["deviceCount"] = p.deviceCount;
  Json devices = Json::array();
  for (const DeviceInfo& d : p.devices) devices.push_back(json::devicePropertiesJson(d, p.version));
  j["devices"] = devices;
  return j;
}

const char* layoutName(host::TableLayout layout) {
  switch (layout) {
    case host::TableLayout::Known: return "known";
    case host::TableLayout::Newer: return "newer";
    case host::TableLayout::Older: return "older";
  }
  return "?";
}

// The GIN, RMA and CollNet tables of the library, and what each release
// would take from them; null when no library opened.
Json otherTables(const OtherTables& t) {
  if (t.library.empty()) return Json(nullptr);
  Json j = Json::object();
  j["library"] = t.library;
  j["error"] = nonEmptyOrNull(t.error);
  Json exported = Json::array();
  for (const host::ExportedTable& e : t.exported) {
    exported.push_back({{"family", host::tableFamilyName(e.family)},
                        {"version", e.version},
                        {"symbol", e.symbol},
                        {"layout", layoutName(e.layout)}});
  }
  j["exported"] = exported;
  Json releases = Json::array();
  for (const ReleaseTables& r : t.releases) {
    Json tables = Json::array();
    for (const host::TableChoice& c : r.tables) {
      tables.push_back({{"family", host::tableFamilyName(c.family)},
                        {"symbol", c.symbol.empty() ? Json(nullptr) : Json(c.symbol)},
                        {"why", c.why}});
    }
    releases.push_back({{"nccl", r.release}, {"tables", tables}});
  }
  j["releases"] = releases;
  return j;
}

void addDiagnostics(const Inspection& in, Json& j) {
  Json warnings = Json::array();
  for (const Warning& x : in.warnings) {
    warnings.push_back({{"device", x.device >= 0 ? Json(x.device) : Json(nullptr)},
                        {"field", x.field},
                        {"message", x.message}});
  }
  j["warnings"] = warnings;
  // Where params came from: "library" (the file's published table, no init
  // needed) or "init" (what init announced on NCCL_ENV).
  j["paramsFrom"] = in.paramsLibrary.empty() ? "init" : "library";
  Json params = Json::array();
  for (const Param& p : in.params) {
    params.push_back({{"name", p.name},
                      {"value", p.value},
                      {"default", p.defaultValue},
                      {"source", p.source},
                      {"help", p.help}});
  }
  j["params"] = params;
  j["envLines"] = in.envLines;
  Json log = Json::array();
  for (const LogLine& line : in.pluginLog) {
    log.push_back({{"level", logLevelName(line.level)},
                   {"flags", static_cast<uint64_t>(line.flags)},
                   {"text", line.text}});
  }
  j["log"] = log;
}

}  // namespace

void printJson(const Inspection& in, std::ostream& out) {
  Json j = Json::object();
  j["tool"] = "ncclnet-info";
  j["request"] = request(in);
  Json attempts = Json::array();
  for (const host::LibraryAttempt& a : in.report.attempts)
    attempts.push_back(attempt(a, in.report));
  j["attempts"] = attempts;
  j["outcome"] = in.report.outcome;
  Json verdicts = Json::array();
  for (const ReleaseVerdict& v : in.verdicts) {
    verdicts.push_back({{"nccl", v.release},
                        {"outcome", outcomeName(v.outcome)},
                        {"version", versionOrNull(v.version)},
                        {"table", nonEmptyOrNull(v.table)},
                        {"reason", nonEmptyOrNull(v.reason)},
                        {"line", verdictLine(v)}});
  }
  j["verdicts"] = verdicts;
  j["loaded"] = in.loaded;
  j["plugin"] = in.loaded ? plugin(in.plugin) : Json(nullptr);
  j["explanation"] = in.loaded ? Json(nullptr) : Json(failureExplanation(in));
  j["otherTables"] = otherTables(in.otherTables);
  addDiagnostics(in, j);
  j["exitCode"] = in.exitCode;
  out << json::jsonText(j) << '\n';
}

}  // namespace ncclnet::info
