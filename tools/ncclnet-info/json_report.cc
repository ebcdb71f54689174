// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the JSON report.
#include "json_report.hpp"

#include "explain.hpp"
#include "ncclnet/host/json_writer.hpp"
#include "ncclnet/result_name.hpp"

namespace ncclnet::info {

using host::JsonWriter;

namespace {

void writeRequest(const Inspection& in, JsonWriter& w) {
  const host::LoadReport& r = in.report;
  w.key("request").beginObject();
  w.key("pluginList").value(r.pluginList);
  w.key("pluginListSource").value(r.pluginListSource);
  w.key("entries").beginArray();
  for (const std::string& e : r.entries) w.value(e);
  w.endArray();
  w.key("net").value(r.netName.empty() ? std::optional<std::string>() : r.netName);
  w.key("nccl").value(in.options.nccl.empty() ? std::optional<std::string>() : in.options.nccl);
  w.key("ncclRelease")
      .value(in.options.ncclRelease.empty() ? std::optional<std::string>()
                                            : in.options.ncclRelease);
  w.key("pluginListRule").value(r.nameRules);
  w.key("pinnedVersion");
  if (in.options.pinned)
    w.value(in.options.pinned);
  else
    w.null();
  w.key("window").beginObject();
  w.key("oldest").value(r.oldestVersion);
  w.key("newest").value(r.newestVersion);
  w.endObject();
  w.endObject();
}

void writeAttempt(const host::LibraryAttempt& a, const host::LoadReport& r, JsonWriter& w) {
  w.beginObject();
  w.key("entry").value(a.entry);
  w.key("file").value(a.file);
  w.key("opened").value(a.opened);
  w.key("error").value(a.opened ? std::optional<std::string>() : a.error);
  w.key("path").value(a.opened ? std::optional<std::string>(a.path) : std::nullopt);
  w.key("symbols").beginObject();
  for (const host::SymbolProbe& p : a.symbols) {
    w.key("ncclNetPlugin_v" + std::to_string(p.version)).value(p.found);
  }
  w.endObject();
  w.key("version");
  if (a.version)
    w.value(a.version);
  else
    w.null();
  w.key("skipped").beginArray();
  for (const auto& [version, why] : skippedVersions(a, r.oldestVersion, r.newestVersion)) {
    w.beginObject().key("version").value(version).key("reason").value(why).endObject();
  }
  w.endArray();
  w.key("tableName").value(a.tableName.empty() ? std::optional<std::string>() : a.tableName);
  w.key("devices");
  if (a.devices >= 0)
    w.value(a.devices);
  else
    w.null();
  w.key("selected").value(a.selected);
  w.key("verdict").value(a.verdict);
  w.endObject();
}

const char* slotState(SlotState s) {
  switch (s) {
    case SlotState::Provided: return "provided";
    case SlotState::Null: return "null";
    case SlotState::NotInVersion: return "absent";
  }
  return "?";
}

void writeDevice(const PluginInfo& p, const DeviceInfo& d, JsonWriter& w) {
  const ncclNetProperties_v12_t& x = d.props;
  w.beginObject();
  w.key("index").value(d.index);
  w.key("status").value(resultName(d.status));
  if (d.status == ncclSuccess) {
    w.key("name").value(d.name);
    w.key("pciPath").value(d.pciPath);
    w.key("guid").value(static_cast<uint64_t>(x.guid));
    w.key("ptrSupport").value(x.ptrSupport);
    w.key("ptrSupportText").value(ptrSupportText(x.ptrSupport));
    w.key("regIsGlobal").value(x.regIsGlobal);
    w.key("forceFlush").value(x.forceFlush);
    w.key("speed").value(x.speed);
    w.key("port").value(x.port);
    w.key("latency").value(static_cast<double>(x.latency));
    w.key("maxComms").value(x.maxComms);
    w.key("maxRecvs").value(x.maxRecvs);
    w.key("netDeviceType").value(static_cast<int>(x.netDeviceType));
    w.key("netDeviceTypeName").value(deviceTypeName(x.netDeviceType));
    w.key("netDeviceVersion").value(x.netDeviceVersion);
    w.key("vProps").beginObject();
    w.key("ndevs").value(x.vProps.ndevs);
    w.key("devs").beginArray();
    for (int i = 0; i < x.vProps.ndevs && i < NCCL_NET_MAX_DEVS_PER_NIC_V12; i++) {
      w.value(x.vProps.devs[i]);
    }
    w.endArray();
    w.endObject();
    w.key("maxP2pBytes").value(static_cast<uint64_t>(x.maxP2pBytes));
    w.key("maxCollBytes").value(static_cast<uint64_t>(x.maxCollBytes));
    w.key("maxMultiRequestSize").value(x.maxMultiRequestSize);
    w.key("railId").value(static_cast<int>(x.railId));
    w.key("planeId").value(static_cast<int>(x.planeId));
    // Fields the plugin's ABI version lacks: the values above are NCCL's defaults.
    w.key("defaulted").beginArray();
    for (const char* f :
         {"netDeviceType", "netDeviceVersion", "regIsGlobal", "forceFlush", "vProps", "maxP2pBytes",
          "maxCollBytes", "maxMultiRequestSize", "railId", "planeId"}) {
      if (p.version < propertySince(f)) w.value(f);
    }
    w.endArray();
  }
  w.endObject();
}

void writePlugin(const PluginInfo& p, JsonWriter& w) {
  w.key("plugin").beginObject();
  w.key("name").value(p.name);
  w.key("path").value(p.path);
  w.key("version").value(p.version);
  w.key("exportedVersions").beginArray();
  for (int v : p.exported) w.value(v);
  w.endArray();
  w.key("optional").beginObject();
  for (const OptionalSlot& s : p.optional) w.key(s.name).value(slotState(s.state));
  w.endObject();
  w.key("init").value(resultName(p.initResult));
  w.key("devicesResult").value(resultName(p.devicesResult));
  w.key("finalize").value(resultName(p.finalizeResult));
  w.key("deviceCount").value(p.deviceCount);
  w.key("devices").beginArray();
  for (const DeviceInfo& d : p.devices) writeDevice(p, d, w);
  w.endArray();
  w.endObject();
}

void writeDiagnostics(const Inspection& in, JsonWriter& w) {
  w.key("warnings").beginArray();
  for (const Warning& x : in.warnings) {
    w.beginObject();
    w.key("device");
    if (x.device >= 0)
      w.value(x.device);
    else
      w.null();
    w.key("field").value(x.field).key("message").value(x.message);
    w.endObject();
  }
  w.endArray();
  // Where params came from: "library" (the file's published table, no init
  // needed) or "init" (what init announced on NCCL_ENV).
  w.key("paramsFrom").value(in.paramsLibrary.empty() ? "init" : "library");
  w.key("params").beginArray();
  for (const Param& p : in.params) {
    w.beginObject();
    w.key("name").value(p.name).key("value").value(p.value);
    w.key("default").value(p.defaultValue).key("source").value(p.source);
    w.key("help").value(p.help);
    w.endObject();
  }
  w.endArray();
  w.key("envLines").beginArray();
  for (const std::string& line : in.envLines) w.value(line);
  w.endArray();
  w.key("log").beginArray();
  for (const LogLine& line : in.pluginLog) {
    w.beginObject();
    w.key("level").value(logLevelName(line.level));
    w.key("flags").value(static_cast<uint64_t>(line.flags));
    w.key("text").value(line.text);
    w.endObject();
  }
  w.endArray();
}

}  // namespace

void printJson(const Inspection& in, std::ostream& out) {
  JsonWriter w(out);
  w.beginObject();
  w.key("tool").value("ncclnet-info");
  writeRequest(in, w);
  w.key("attempts").beginArray();
  for (const host::LibraryAttempt& a : in.report.attempts) writeAttempt(a, in.report, w);
  w.endArray();
  w.key("outcome").value(in.report.outcome);
  w.key("verdicts").beginArray();
  for (const ReleaseVerdict& v : in.verdicts) {
    w.beginObject();
    w.key("nccl").value(v.release).key("outcome").value(outcomeName(v.outcome));
    w.key("version");
    if (v.version)
      w.value(v.version);
    else
      w.null();
    w.key("table").value(v.table.empty() ? std::optional<std::string>() : v.table);
    w.key("reason").value(v.reason.empty() ? std::optional<std::string>() : v.reason);
    w.key("line").value(verdictLine(v));
    w.endObject();
  }
  w.endArray();
  w.key("loaded").value(in.loaded);
  if (in.loaded)
    writePlugin(in.plugin, w);
  else
    w.key("plugin").null();
  w.key("explanation").value(in.loaded ? std::optional<std::string>() : failureExplanation(in));
  writeDiagnostics(in, w);
  w.key("exitCode").value(in.exitCode);
  w.endObject();
  out << '\n';
}

}  // namespace ncclnet::info
