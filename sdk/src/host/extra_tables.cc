// SPDX-License-Identifier: Apache-2.0
#include "ncclnet/host/extra_tables.hpp"

#include "ncclnet/abi/collnet.h"
#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/rma.h"

namespace ncclnet::host {

namespace {

bool atLeast(const NcclRelease& r, int minor, int patch) {
  return r.minor > minor || (r.minor == minor && r.patch >= patch);
}

std::vector<std::string> symbols(const char* prefix, std::initializer_list<int> versions) {
  std::vector<std::string> names;
  for (int v : versions) names.push_back(std::string(prefix) + "_v" + std::to_string(v));
  return names;
}

// Where NCCL gives a communicator the tables of the selected net plugin's
// library only.
std::string assignSource(const NcclRelease& r) {
  if (!atLeast(r, 26, 0)) return "src/net.cc ncclNetInit";
  if (!atLeast(r, 27, 3)) return "src/plugin/net.cc ncclNetInit";
  return "src/plugin/net.cc ncclNetPluginAssignToComm";
}

TableSearch collNetSearch(const NcclRelease& r) {
  TableSearch s{TableFamily::CollNet, true, {}, "", "", ""};
  // The same window as the net tables, newest first.
  for (int v = behaviourOf(r).newestVersion; v >= NCCLNET_ABI_OLDEST; v--) {
    s.symbols.push_back("ncclCollNetPlugin_v" + std::to_string(v));
  }
  s.source = atLeast(r, 26, 0) ? "src/plugin/net.cc ncclNetPluginLoad" : "src/net.cc";
  s.note =
      "used only with NCCL_COLLNET_ENABLE=1 and at least NCCL_COLLNET_NODE_THRESHOLD (2) nodes";
  return s;
}

TableSearch ginSearch(const NcclRelease& r) {
  TableSearch s{TableFamily::Gin, true, {}, "", "", ""};
  if (!atLeast(r, 28, 7)) {
    s.note = "no GIN plugin table before NCCL 2.28.7";
    return s;
  }
  if (!atLeast(r, 29, 7)) {
    s.symbols = symbols("ncclGinPlugin", {11});
    s.source = "src/plugin/net/net_v11.cc getNcclGin_v11";
    s.note =
        "looked for only in the selected net plugin's library; init is called for the first "
        "communicator only (src/plugin/net.cc ncclNetPluginInit)";
    return s;
  }
  // initPluginLibsOnceFunc adds the net library through ncclGetNetPluginLib.
  s.onlyWithSelectedNet = false;
  s.searchedFirst = "NCCL_GIN_PLUGIN (a list; none empties it) or libnccl-gin.so";
  s.source = "src/plugin/gin.cc ncclGinPluginLoad";
  if (!atLeast(r, 30, 3)) {
    s.symbols = symbols("ncclGinPlugin", {12, 11});
  } else if (!atLeast(r, 30, 7)) {
    s.symbols = symbols("ncclGinPlugin", {13, 12, 11});
  } else {
    s.symbols = symbols("ncclGinPlugin", {14, 13});
    s.note =
        "a table whose device 0 is of type GIN_PROXY is skipped: NCCL runs its own GIN proxy "
        "over the RMA table instead (src/plugin/gin.cc ncclGinPluginAssignToComm)";
  }
  return s;
}

TableSearch rmaSearch(const NcclRelease& r) {
  TableSearch s{TableFamily::Rma, true, {}, "", "", ""};
  if (!atLeast(r, 30, 3)) {
    s.note = "no RMA plugin table before NCCL 2.30.3";
    return s;
  }
  if (!atLeast(r, 30, 7)) {
    // The RMA slot of each GIN version (src/plugin/gin.cc getNcclRma).
    s.symbols = {"ncclRmaPlugin_v13", "ncclGinPlugin_v12", "ncclGinPlugin_v11"};
    s.onlyWithSelectedNet = false;  // from the GIN libraries, the net library among them
    s.source = "src/plugin/gin.cc ncclGinPluginLoad";
    s.note = "loaded but never initialised in this release (NVIDIA/nccl#2156): no external RMA";
    return s;
  }
  s.symbols = symbols("ncclRmaPlugin", {14, 13});
  s.symbols.push_back("ncclGinPlugin_v13");  // src/plugin/rma/rma_v13.cc: same layout
  // initPluginLibsOnceFunc adds the net library through ncclGetNetPluginLib.
  s.onlyWithSelectedNet = false;
  s.searchedFirst =
      "NCCL_RMA_PLUGIN (a list; none empties it) or libnccl-rma.so, then the GIN plugin's library";
  s.source = "src/plugin/rma.cc ncclRmaPluginLoad";
  s.note =
      "a v13 table is refused unless device 0 is of type GIN_PROXY "
      "(src/plugin/rma/rma_v13.cc)";
  return s;
}

}  // namespace

const char* tableFamilyName(TableFamily family) {
  switch (family) {
    case TableFamily::CollNet: return "CollNet";
    case TableFamily::Gin: return "GIN";
    case TableFamily::Rma: return "RMA";
  }
  return "?";
}

std::vector<TableSearch> extraTableSearches(const NcclRelease& release) {
  return {collNetSearch(release), ginSearch(release), rmaSearch(release)};
}

std::vector<NcclRelease> extraTableReleases() {
  std::vector<NcclRelease> releases;
  for (const NcclRelease& r : knownNcclReleases()) {
    bool ginOrRma = false;
    for (const TableSearch& s : extraTableSearches(r))
      ginOrRma |= s.family != TableFamily::CollNet && !s.symbols.empty();
    if (!ginOrRma) continue;
    // Oldest first: a later patch of the same line replaces the earlier one.
    if (!releases.empty() && releases.back().major == r.major && releases.back().minor == r.minor)
      releases.pop_back();
    releases.push_back(r);
  }
  return releases;
}

NetLibrary netLibraryIn(const LoadReport& report, const std::string& path) {
  // Replays src/plugin/plugin_open.cc: the net library's name is set by each
  // dlopen that succeeds and cleared when ncclNetPluginLoad closes a library
  // without a net table; a failed dlopen leaves it as it was.
  std::string kept;
  std::string reason = "this release does not open it";
  for (const LibraryAttempt& a : report.attempts) {
    if (!a.opened) continue;
    if (a.selected) {
      if (a.path == path) return NetLibrary{NetLibraryUse::Selected, ""};
      return NetLibrary{NetLibraryUse::NotReopened, "NCCL selects the net table of " + a.path};
    }
    kept = a.version != 0 ? a.path : "";
    if (a.path == path) reason = a.verdict;
  }
  return NetLibrary{kept == path ? NetLibraryUse::KeptOpen : NetLibraryUse::NotReopened, reason};
}

std::vector<TableChoice> extraTablesTaken(const NcclRelease& release,
                                          const std::function<bool(const std::string&)>& has,
                                          const NetLibrary& net) {
  std::vector<TableChoice> choices;
  const std::string notSelected =
      "NCCL would not select this library's net table (" + net.reason + ")";
  for (const TableSearch& search : extraTableSearches(release)) {
    TableChoice choice{search.family, "", ""};
    std::string family = tableFamilyName(search.family);
    if (search.symbols.empty()) {
      choice.why = search.note;
      choices.push_back(choice);
      continue;
    }
    if (net.use != NetLibraryUse::Selected && search.onlyWithSelectedNet) {
      choice.why = "not taken, because " + notSelected + ": " + family +
                   " comes only from the selected net plugin's library (" + assignSource(release) +
                   ")";
      choices.push_back(choice);
      continue;
    }
    if (net.use == NetLibraryUse::NotReopened) {
      choice.why = "not taken, because " + notSelected +
                   " and does not keep it as its net library, so ncclGetNetPluginLib "
                   "(src/plugin/plugin_open.cc) does not reopen it for " +
                   search.source;
      choices.push_back(choice);
      continue;
    }
    for (const std::string& symbol : search.symbols) {
      if (has(symbol)) {
        choice.symbol = symbol;
        break;
      }
    }
    std::string looked;
    for (const std::string& symbol : search.symbols)
      looked += (looked.empty() ? "" : ", ") + symbol;
    if (net.use == NetLibraryUse::KeptOpen) {
      choice.why = notSelected +
                   ", but keeps the library open and looks here too (src/plugin/plugin_open.cc "
                   "ncclGetNetPluginLib); ";
    }
    if (choice.symbol.empty()) {
      choice.why += "looks for " + looked + "; this library exports none";
    } else {
      choice.why += "takes " + choice.symbol + ", the first of " + looked +
                    " this library exports (" + search.source + ")";
    }
    if (!search.searchedFirst.empty()) choice.why += "; " + search.searchedFirst + " come first";
    if (!search.note.empty() && !choice.symbol.empty()) choice.why += "; " + search.note;
    choices.push_back(choice);
  }
  return choices;
}

std::vector<ExportedTable> exportedExtraTables(const std::function<bool(const std::string&)>& has) {
  struct Family {
    TableFamily family;
    const char* prefix;
    int oldest, newest;  // the versions whose layout this SDK knows
  };
  static constexpr Family kFamilies[] = {
      {TableFamily::CollNet, "ncclCollNetPlugin", NCCLNET_ABI_OLDEST, NCCLNET_ABI_NEWEST},
      {TableFamily::Gin, "ncclGinPlugin", NCCLNET_GIN_ABI_OLDEST, NCCLNET_GIN_ABI_NEWEST},
      {TableFamily::Rma, "ncclRmaPlugin", NCCLNET_RMA_ABI_OLDEST, NCCLNET_RMA_ABI_NEWEST},
  };
  std::vector<ExportedTable> tables;
  for (const Family& f : kFamilies) {
    for (int v = kExportedTableProbeNewest; v >= 1; v--) {
      std::string symbol = std::string(f.prefix) + "_v" + std::to_string(v);
      if (!has(symbol)) continue;
      TableLayout layout = v > f.newest   ? TableLayout::Newer
                           : v < f.oldest ? TableLayout::Older
                                          : TableLayout::Known;
      tables.push_back(ExportedTable{f.family, v, symbol, layout});
    }
  }
  return tables;
}

}  // namespace ncclnet::host
