// SPDX-License-Identifier: Apache-2.0
// ncclnet-info --list: every net plugin on the library search path, like
// `fi_info -l` lists libfabric's providers: the tables each library
// exports, their names, which NCCL releases would take which table, and
// whether the library loads at all. No plugin is initialized.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "plugin_search.hpp"

namespace ncclnet::info {

struct ListedTable {
  int version = 0;
  std::optional<std::string> name;  // nullopt: the table's name is NULL
};

struct ListedPlugin {
  FoundFile file;
  std::string pluginValue;  // the NCCL_NET_PLUGIN value that names it ("" for libnccl-net.so)
  bool opened = false;
  std::string error;                                  // dlerror() when it did not open
  std::vector<ListedTable> tables;                    // newest first
  std::vector<std::pair<std::string, int>> releases;  // NCCL release -> table version, 0: none
  bool loads() const { return opened && !tables.empty(); }
};

struct PluginListing {
  std::vector<std::string> places;
  std::vector<ListedPlugin> plugins;
};

PluginListing listPlugins();

void printListText(const PluginListing& listing, std::ostream& out);
void printListJson(const PluginListing& listing, std::ostream& out);

// 0 when at least one listed plugin loads, 1 otherwise.
int listExitCode(const PluginListing& listing);

}  // namespace ncclnet::info
