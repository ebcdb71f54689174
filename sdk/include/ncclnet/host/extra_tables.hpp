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

// What a release takes from a net plugin's library whose symbols `has`
// answers: the symbol ("" for none) and why, in one sentence that
// does not repeat the release.
struct TableChoice {
  TableFamily family;
  std::string symbol;
  std::string why;
};
std::vector<TableChoice> extraTablesTaken(const NcclRelease& release,
                                          const std::function<bool(const std::string&)>& has);

}  // namespace ncclnet::host
