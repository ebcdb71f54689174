// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host side): the GIN, RMA and CollNet tables an NCCL release
// looks up in a net plugin's library, newest first, and the one it takes.
// Every rule names its NCCL source; docs/gin-rma.md has the same table for
// readers.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"

namespace ncclnet::host {

enum class TableFamily { CollNet, Gin, Rma };
const char* tableFamilyName(TableFamily family);  // "CollNet", "GIN", "RMA"

// How a release looks for one family of tables.
struct TableSearch {
  TableFamily family;
  // The table is taken only from the library whose net table NCCL selected.
  // Otherwise NCCL also looks in a net plugin library it opened and kept
  // open without selecting its net table (see NetLibraryUse).
  bool onlyWithSelectedNet = true;
  // Looked up newest first; the first one found is taken, and a failing
  // init does not make NCCL try an older one. Empty: the release has no
  // such plugin table.
  std::vector<std::string> symbols;
  // Libraries searched before the net plugin's library ("" if none).
  std::string searchedFirst;
  std::string source;  // NCCL file and function
  std::string note;    // what else decides whether NCCL uses the table ("" if nothing)
};
std::vector<TableSearch> extraTableSearches(const NcclRelease& release);

// The newest known patch of each release line whose loaders look for GIN
// or RMA tables (2.28.9, 2.29.7, 2.30.7), oldest first.
std::vector<NcclRelease> extraTableReleases();

// What NCCL's net loader leaves of one library, which decides where its
// GIN and RMA loaders look. NCCL keeps the last net plugin library it
// opened and found a net table in (src/plugin/plugin_open.cc
// openPluginLib), even when init fails, devices() reports none, device 0
// has the wrong type or NCCL_NET names another table
// (src/plugin/net.cc ncclNetPluginInit does not unload it); it closes a
// library without a net table it accepts (ncclNetPluginLoad), and then has
// none for ncclGetNetPluginLib to reopen.
enum class NetLibraryUse {
  Selected,     // its net table is the one NCCL assigns
  KeptOpen,     // not selected, but the net library ncclGetNetPluginLib reopens
  NotReopened,  // not selected, and not the library ncclGetNetPluginLib reopens
};
struct NetLibrary {
  NetLibraryUse use = NetLibraryUse::Selected;
  std::string reason;  // why not selected ("" when selected)
};
// What a Loader's report for a release says of the library at `path`
// (LibraryAttempt::path).
NetLibrary netLibraryIn(const LoadReport& report, const std::string& path);

// What a release takes from a net plugin's library whose symbols `has`
// answers: the symbol ("" for none) and why, in one sentence that
// does not repeat the release.
struct TableChoice {
  TableFamily family;
  std::string symbol;
  std::string why;
};
std::vector<TableChoice> extraTablesTaken(const NcclRelease& release,
                                          const std::function<bool(const std::string&)>& has,
                                          const NetLibrary& net = {});

// A GIN, RMA or CollNet table a library exports, whether or not this SDK
// knows its layout (abi/gin.h, rma.h, collnet.h).
enum class TableLayout { Known, Newer, Older };  // than the ones this SDK knows
struct ExportedTable {
  TableFamily family;
  int version;
  std::string symbol;
  TableLayout layout;
};
// Every such table `has` finds among versions 1 .. kExportedTableProbeNewest,
// by family (CollNet, GIN, RMA), newest first.
constexpr int kExportedTableProbeNewest = 32;
std::vector<ExportedTable> exportedExtraTables(const std::function<bool(const std::string&)>& has);

}  // namespace ncclnet::host
