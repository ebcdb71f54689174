// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the text report.
#include "text_report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "explain.hpp"
#include "ncclnet/result_name.hpp"

namespace ncclnet::info {

namespace {

constexpr int kLabelWidth = 22;
constexpr int kWarningIndent = 32;  // "  device 12 maxMultiRequestSize "

// "  label                 value"
void row(std::ostream& out, const std::string& label, const std::string& value, int indent = 2) {
  out << std::string(indent, ' ') << std::left << std::setw(kLabelWidth) << label << value << '\n';
}

// Breaks a paragraph into lines of at most `width` characters at spaces.
std::string wrap(const std::string& text, size_t width) {
  std::string out, line, word;
  auto flush = [&] {
    if (line.empty()) return;
    out += (out.empty() ? "" : "\n") + line;
    line.clear();
  };
  for (size_t i = 0; i <= text.size(); i++) {
    if (i < text.size() && text[i] != ' ') {
      word += text[i];
      continue;
    }
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) flush();
    line += (line.empty() ? "" : " ") + word;
    word.clear();
  }
  flush();
  return out;
}

std::string quoted(const std::optional<std::string>& s) {
  return s ? *s : "(NULL)";
}

std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
  return buf;
}

void printRequest(const Inspection& in, std::ostream& out) {
  const host::LoadReport& r = in.report;
  out << "Request\n";
  std::string source = r.pluginListSource == "option" ? "from --plugin" : r.pluginListSource;
  row(out, "NCCL_NET_PLUGIN", r.pluginList + "  (" + source + ")");
  row(out, "NCCL_NET", r.netName.empty() ? "(unset: any plugin name)" : r.netName);
  std::string window = "ncclNetPlugin_" + windowText(r.oldestVersion, r.newestVersion);
  if (in.options.pinned)
    window += "  (pinned by --abi)";
  else if (!in.options.nccl.empty())
    window += "  (what NCCL " + in.options.ncclRelease + " accepts)";
  else
    window += "  (every version this tool knows)";
  row(out, "ABI window", window);
  row(out, "NCCL_NET_PLUGIN rule", r.nameRules);
}

void printVerdicts(const Inspection& in, std::ostream& out) {
  out << "\nNCCL releases (what each would do with this environment)\n";
  for (const ReleaseVerdict& v : in.verdicts) out << "  " << verdictLine(v) << '\n';
}

void printSymbols(const host::LibraryAttempt& a, std::ostream& out) {
  std::string line;
  for (const host::SymbolProbe& p : a.symbols) {
    line += (line.empty() ? "v" : "  v") + std::to_string(p.version) + (p.found ? " yes" : " -");
  }
  row(out, "symbols", line, 6);
}

// Versions passed over for the same reason share one line.
void printSkipped(const std::vector<std::pair<int, std::string>>& skipped, std::ostream& out) {
  for (size_t i = 0; i < skipped.size();) {
    std::string versions;
    size_t j = i;
    for (; j < skipped.size() && skipped[j].second == skipped[i].second; j++) {
      versions += (versions.empty() ? "v" : ", v") + std::to_string(skipped[j].first);
    }
    row(out, "skipped", versions + ": " + skipped[i].second, 6);
    i = j;
  }
}

void printAttempts(const Inspection& in, std::ostream& out) {
  const host::LoadReport& r = in.report;
  out << "\nCandidates (tried in this order)\n";
  if (r.entries.empty()) out << "  none: NCCL_NET_PLUGIN names no library\n";
  size_t n = 0;
  std::string lastEntry;
  for (const host::LibraryAttempt& a : r.attempts) {
    if (n == 0 || a.entry != lastEntry) {
      out << "  entry " << ++n << ": '" << a.entry << "'\n";
      lastEntry = a.entry;
    }
    out << "    dlopen(" << (a.file.empty() ? "NULL: the program itself" : "\"" + a.file + "\"")
        << ")\n";
    if (!a.opened) {
      row(out, "failed", a.error, 6);
      continue;
    }
    row(out, "opened", a.path, 6);
    printSymbols(a, out);
    row(out, "version", choiceText(a, r.oldestVersion, r.newestVersion), 6);
    printSkipped(skippedVersions(a, r.oldestVersion, r.newestVersion), out);
    if (!a.tableName.empty()) row(out, "table name", a.tableName, 6);
    if (a.devices >= 0) row(out, "devices", std::to_string(a.devices), 6);
    row(out, "verdict", a.verdict, 6);
  }
  out << "  outcome: " << in.report.outcome << '\n';
}

std::string slotText(const OptionalSlot& s) {
  switch (s.state) {
    case SlotState::Provided: return "provided";
    case SlotState::Null: return "NULL";
    case SlotState::NotInVersion: return "not in this ABI (v" + std::to_string(s.since) + "+)";
  }
  return "?";
}

std::string versionsText(const std::vector<int>& versions) {
  std::string text;
  for (int v : versions) text += (text.empty() ? "v" : ", v") + std::to_string(v);
  return text.empty() ? "none" : text;
}

void printPlugin(const PluginInfo& p, std::ostream& out) {
  out << "\nPlugin\n";
  row(out, "name", p.name);
  row(out, "library", p.path);
  row(out, "ABI version", "v" + std::to_string(p.version));
  row(out, "exported", versionsText(p.exported));
  for (const OptionalSlot& s : p.optional) row(out, s.name, slotText(s));
  row(out, "init", resultText(p.initResult));
  if (p.initResult != ncclSuccess) return;
  row(out, "devices()",
      p.devicesResult == ncclSuccess ? std::to_string(p.deviceCount) : resultText(p.devicesResult));
  row(out, "finalize", resultText(p.finalizeResult));
}

std::string exportedText(const host::ExportedTable& t) {
  switch (t.layout) {
    case host::TableLayout::Known: return t.symbol;
    case host::TableLayout::Newer: return t.symbol + " (newer than this tool knows)";
    case host::TableLayout::Older: return t.symbol + " (older than this tool knows)";
  }
  return t.symbol;
}

// GIN, RMA and CollNet: what the library exports, and what each release
// would take from it.
void printOtherTables(const OtherTables& t, std::ostream& out) {
  if (t.library.empty()) return;
  out << "\nOther tables in this library (" << t.library << ")\n";
  if (!t.error.empty()) {
    row(out, "exported", "unknown: " + t.error);
    return;
  }
  std::string exported;
  for (const host::ExportedTable& e : t.exported)
    exported += (exported.empty() ? "" : ", ") + exportedText(e);
  std::istringstream lines(wrap(exported.empty() ? "none" : exported, 76));
  std::string label = "exported";
  for (std::string line; std::getline(lines, line); label.clear()) row(out, label, line);
  for (const ReleaseTables& r : t.releases) {
    for (const host::TableChoice& c : r.tables) {
      row(out, "NCCL " + r.release + " " + host::tableFamilyName(c.family),
          c.symbol.empty() ? "none" : c.symbol);
      std::istringstream why(wrap(c.why, 94));
      for (std::string line; std::getline(why, line);) out << "      " << line << '\n';
    }
  }
}

// A property value, marked when the ABI version lacks the field.
void prop(std::ostream& out, const PluginInfo& p, const char* field, const std::string& value) {
  int since = propertySince(field);
  if (p.version >= since) {
    row(out, field, value);
  } else {
    row(out, field, value + "   (not in v" + std::to_string(p.version) + ": NCCL's default)");
  }
}

std::string sizeText(size_t bytes) {
  std::string unit = binarySizeText(bytes);
  return std::to_string(bytes) + (unit.empty() ? "" : " (" + unit + ")");
}

std::string idText(int id) {
  return std::to_string(id) + (id == NCCL_NET_ID_UNDEF ? " (unknown)" : "");
}

void printDevice(const PluginInfo& p, const DeviceInfo& d, std::ostream& out) {
  out << "\nDevice " << d.index << (d.name ? "  " + *d.name : "") << '\n';
  if (d.status != ncclSuccess) {
    row(out, "getProperties", resultText(d.status));
    return;
  }
  const ncclNetProperties_v12_t& x = d.props;
  prop(out, p, "name", quoted(d.name));
  prop(out, p, "pciPath", quoted(d.pciPath));
  prop(out, p, "guid", hex64(x.guid));
  prop(out, p, "ptrSupport",
       std::to_string(x.ptrSupport) + " (" + ptrSupportText(x.ptrSupport) + ")");
  prop(out, p, "regIsGlobal", std::to_string(x.regIsGlobal));
  prop(out, p, "forceFlush", std::to_string(x.forceFlush));
  prop(out, p, "speed", std::to_string(x.speed) + " Mb/s");
  prop(out, p, "port", std::to_string(x.port));
  char latency[32];
  std::snprintf(latency, sizeof(latency), "%g us", x.latency);
  prop(out, p, "latency", latency);
  prop(out, p, "maxComms", std::to_string(x.maxComms));
  prop(out, p, "maxRecvs", std::to_string(x.maxRecvs));
  prop(out, p, "netDeviceType",
       std::to_string(x.netDeviceType) + " (" + deviceTypeName(x.netDeviceType) + ")");
  prop(out, p, "netDeviceVersion", std::to_string(x.netDeviceVersion));
  std::string devs;
  int shown = std::min(std::max(x.vProps.ndevs, 0), NCCL_NET_MAX_DEVS_PER_NIC_V12);
  for (int i = 0; i < shown; i++) devs += (i ? ", " : "") + std::to_string(x.vProps.devs[i]);
  prop(out, p, "vProps", "ndevs " + std::to_string(x.vProps.ndevs) + ": [" + devs + "]");
  prop(out, p, "maxP2pBytes", sizeText(x.maxP2pBytes));
  prop(out, p, "maxCollBytes", sizeText(x.maxCollBytes));
  prop(out, p, "maxMultiRequestSize", std::to_string(x.maxMultiRequestSize));
  prop(out, p, "railId", idText(x.railId));
  prop(out, p, "planeId", idText(x.planeId));
}

// What the plugin itself logged at WARN, e.g. why its init failed.
void printPluginWarnings(const Inspection& in, std::ostream& out) {
  bool header = false;
  for (const LogLine& line : in.pluginLog) {
    if (line.level != NCCL_LOG_WARN) continue;
    if (!header) out << "\nPlugin log warnings\n";
    header = true;
    out << "  WARN " << line.text << '\n';
  }
}

void printWarnings(const Inspection& in, std::ostream& out) {
  out << "\nWarnings (" << in.warnings.size() << ")\n";
  if (in.warnings.empty()) out << "  none\n";
  for (const Warning& w : in.warnings) {
    std::string where = w.device < 0 ? "plugin" : "device " + std::to_string(w.device);
    // Long messages continue under the message column, so fields stay scannable.
    std::string message;
    for (char c : wrap(w.message, 100 - kWarningIndent)) {
      message += c;
      if (c == '\n') message += std::string(kWarningIndent, ' ');
    }
    out << "  " << std::left << std::setw(10) << where << std::setw(kWarningIndent - 12) << w.field
        << message << '\n';
  }
  printPluginWarnings(in, out);
}

void printParams(const Inspection& in, std::ostream& out) {
  if (!in.paramsLibrary.empty()) {
    out << "\nParameters published by " << in.paramsLibrary << " (" << in.params.size() << ")\n"
        << "  read from the file, without init; values as the plugin would read this environment\n";
  } else {
    std::string who = in.loaded ? "'" + in.plugin.name + "'" : "the plugin's init";
    out << "\nParameters reported by " << who << " (" << in.params.size() << ")\n";
  }
  if (!in.paramsError.empty())
    out << "  the library's published knob table is unreadable: " << in.paramsError << '\n';
  if (in.params.empty() && !in.pluginInitialized) {
    out << "  none: no plugin was initialized (see the verdicts above), so none could\n"
           "  report its knobs\n";
    return;
  }
  if (in.params.empty()) {
    out << "  none were reported (plugins built with nccl-net-sdk log each knob as\n"
           "  \"param NAME=VALUE ...\" on NCCL_ENV; this one did not)\n";
    if (!in.envLines.empty()) {
      out << "  NCCL_ENV lines the plugin logged:\n";
      for (const std::string& line : in.envLines) out << "    " << line << '\n';
    }
    return;
  }
  size_t name = 4, value = 5, def = 7;
  for (const Param& p : in.params) {
    name = std::max(name, p.name.size());
    value = std::max(value, p.value.size());
    def = std::max(def, p.defaultValue.size());
  }
  auto line = [&](const std::string& a, const std::string& b, const std::string& c,
                  const std::string& d, const std::string& e) {
    out << "  " << std::left << std::setw(name + 2) << a << std::setw(value + 2) << b
        << std::setw(def + 2) << c << std::setw(9) << d << e << '\n';
  };
  // An empty value or default would leave a gap that reads as a shifted column.
  auto shown = [](const std::string& v) { return v.empty() ? std::string("\"\"") : v; };
  line("NAME", "VALUE", "DEFAULT", "FROM", "HELP");
  for (const Param& p : in.params)
    line(p.name, shown(p.value), shown(p.defaultValue), p.source, p.help);
}

}  // namespace

void printText(const Inspection& in, std::ostream& out) {
  printRequest(in, out);
  printVerdicts(in, out);
  printAttempts(in, out);
  if (!in.loaded) {
    out << '\n' << wrap(failureExplanation(in), 100) << '\n';
    if (!in.options.params) printOtherTables(in.otherTables, out);
    printPluginWarnings(in, out);
    if (in.options.params) printParams(in, out);
    return;
  }
  const PluginInfo& p = in.plugin;
  printPlugin(p, out);
  if (in.exitCode == kExitInspectFailed) {
    out << '\n'
        << wrap(
               "The plugin passed NCCL's assignment check but failed when initialized again "
               "for inspection (init " +
                   resultText(p.initResult) + ", devices() " + resultText(p.devicesResult) +
                   "). NCCL initializes a plugin once per communicator (v11+), so this "
                   "plugin would fail on a later communicator.",
               100)
        << '\n';
  }
  if (in.options.params) {
    printParams(in, out);
    return;
  }
  for (const DeviceInfo& d : p.devices) printDevice(p, d, out);
  printOtherTables(in.otherTables, out);
  printWarnings(in, out);
}

}  // namespace ncclnet::info
