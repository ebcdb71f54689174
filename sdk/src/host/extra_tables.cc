// SPDX-License-Identifier: Apache-2.0
#include "ncclnet/host/extra_tables.hpp"

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

TableSearch collNetSearch(const NcclRelease& r) {
  TableSearch s{TableFamily::CollNet, {}, "", "", ""};
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
  TableSearch s{TableFamily::Gin, {}, "", "", ""};
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
  TableSearch s{TableFamily::Rma, {}, "", "", ""};
  if (!atLeast(r, 30, 3)) {
    s.note = "no RMA plugin table before NCCL 2.30.3";
    return s;
  }
  if (!atLeast(r, 30, 7)) {
    // The RMA slot of each GIN version (src/plugin/gin.cc getNcclRma).
    s.symbols = {"ncclRmaPlugin_v13", "ncclGinPlugin_v12", "ncclGinPlugin_v11"};
    s.source = "src/plugin/gin.cc ncclGinPluginLoad";
    s.note = "loaded but never initialised in this release (NVIDIA/nccl#2156): no external RMA";
    return s;
  }
  s.symbols = symbols("ncclRmaPlugin", {14, 13});
  s.symbols.push_back("ncclGinPlugin_v13");  // src/plugin/rma/rma_v13.cc: same layout
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

std::vector<TableChoice> extraTablesTaken(const NcclRelease& release,
                                          const std::function<bool(const std::string&)>& has) {
  std::vector<TableChoice> choices;
  for (const TableSearch& search : extraTableSearches(release)) {
    TableChoice choice{search.family, "", ""};
    std::string family = tableFamilyName(search.family);
    if (search.symbols.empty()) {
      choice.why = search.note;
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
    if (choice.symbol.empty()) {
      choice.why = "looks for " + looked + "; this library exports none";
    } else {
      choice.why = "takes " + choice.symbol + ", the first of " + looked +
                   " this library exports (" + search.source + ")";
    }
    if (!search.searchedFirst.empty()) choice.why += "; " + search.searchedFirst + " come first";
    if (!search.note.empty() && !choice.symbol.empty()) choice.why += "; " + search.note;
    choices.push_back(choice);
  }
  return choices;
}

}  // namespace ncclnet::host
