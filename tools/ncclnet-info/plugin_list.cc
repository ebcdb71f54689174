// SPDX-License-Identifier: Apache-2.0
// ncclnet-info --list: probing and printing the plugins found.
#include "plugin_list.hpp"

#include <dlfcn.h>

#include <iomanip>

#include "json_text.hpp"
#include "ncclnet/abi/net.h"
#include "ncclnet/host/loader.hpp"
#include "verdicts.hpp"

namespace ncclnet::info {

namespace {

std::string pluginValueFor(const std::string& fileName) {
  const std::string prefix = "libnccl-net-";
  if (fileName.compare(0, prefix.size(), prefix) != 0) return "";
  return fileName.substr(prefix.size(), fileName.size() - prefix.size() - 3);
}

// dlopen as NCCL does, read each table's name, close again. Every table
// starts with `const char* name`, whatever its version.
ListedPlugin probe(const FoundFile& file, const std::vector<std::string>& releases) {
  ListedPlugin p;
  p.file = file;
  p.pluginValue = pluginValueFor(file.name);
  void* library = dlopen(file.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    p.error = error ? error : "unknown dlopen error";
    return p;
  }
  p.opened = true;
  for (int v = NCCLNET_ABI_NEWEST; v >= NCCLNET_ABI_OLDEST; --v) {
    const void* table = dlsym(library, ("ncclNetPlugin_v" + std::to_string(v)).c_str());
    if (table == nullptr) continue;
    const char* name = *static_cast<const char* const*>(table);
    p.tables.push_back(ListedTable{v, name ? std::optional<std::string>(name) : std::nullopt});
  }
  dlclose(library);
  for (const std::string& text : releases) {
    host::NcclBehaviour b = host::behaviourOf(*host::findNcclRelease(text));
    int chosen = 0;
    for (const ListedTable& t : p.tables) {
      if (chosen == 0 && t.version >= b.oldestVersion && t.version <= b.newestVersion)
        chosen = t.version;
    }
    p.releases.emplace_back(text, chosen);
  }
  return p;
}

// Versions in a row that share a name share one item: "v12..v6 'sdk-ib'".
std::string tablesText(const ListedPlugin& p) {
  std::string text;
  const std::vector<ListedTable>& t = p.tables;
  for (size_t i = 0; i < t.size();) {
    size_t j = i + 1;
    while (j < t.size() && t[j].name == t[i].name && t[j].version == t[j - 1].version - 1) j++;
    std::string versions = "v" + std::to_string(t[i].version);
    if (j - i > 1) versions += "..v" + std::to_string(t[j - 1].version);
    text += (text.empty() ? "" : ", ") + versions + " '" + t[i].name.value_or("(NULL)") + "'";
    i = j;
  }
  return text.empty() ? "none (no ncclNetPlugin_v6..v12 symbol)" : text;
}

std::string releasesText(const ListedPlugin& p) {
  std::string text;
  for (const auto& [release, version] : p.releases) {
    text += (text.empty() ? "" : ", ") + release + " " +
            (version ? "v" + std::to_string(version) : std::string("none"));
  }
  return text;
}

void row(std::ostream& out, const std::string& label, const std::string& value) {
  out << "    " << std::left << std::setw(10) << label << value << '\n';
}

}  // namespace

PluginListing listPlugins() {
  PluginListing listing;
  listing.places = searchPlaces();
  std::vector<std::string> releases = verdictReleases(Options{});
  for (const FoundFile& file : findPluginFiles()) listing.plugins.push_back(probe(file, releases));
  return listing;
}

int listExitCode(const PluginListing& listing) {
  for (const ListedPlugin& p : listing.plugins) {
    if (p.loads()) return 0;
  }
  return 1;
}

void printListText(const PluginListing& listing, std::ostream& out) {
  out << "Search path (glibc's order for a dlopen from libnccl.so; the DT_RPATH of the\n"
         "application and of libnccl.so, searched first, is not scanned)\n";
  for (const std::string& place : listing.places) out << "  " << place << '\n';
  out << "\nPlugins found (" << listing.plugins.size() << ")\n";
  if (listing.plugins.empty()) out << "  none: no libnccl-net.so or libnccl-net-*.so above\n";
  for (const ListedPlugin& p : listing.plugins) {
    out << "  " << p.file.name << "  ("
        << (p.pluginValue.empty() ? "NCCL_NET_PLUGIN unset" : "NCCL_NET_PLUGIN=" + p.pluginValue)
        << ")\n";
    row(out, "path", p.file.path + "  (" + p.file.origin + ")");
    if (p.file.shadowed)
      row(out, "shadowed", "an earlier place has this name: dlopen finds that one");
    if (!p.opened) {
      row(out, "loads", "no: " + p.error);
      continue;
    }
    row(out, "tables", tablesText(p));
    row(out, "NCCL", releasesText(p));
    row(out, "loads", p.loads() ? "yes" : "no: exports no ncclNetPlugin_v6..v12 table");
  }
}

void printListJson(const PluginListing& listing, std::ostream& out) {
  using json::Json;
  Json plugins = Json::array();
  for (const ListedPlugin& p : listing.plugins) {
    Json tables = Json::array();
    for (const ListedTable& t : p.tables)
      tables.push_back({{"version", t.version}, {"name", json::stringOrNull(t.name)}});
    Json releases = Json::object();
    for (const auto& [release, version] : p.releases) {
      releases[release] = version ? Json(version) : Json(nullptr);
    }
    plugins.push_back({{"file", p.file.name},
                       {"path", p.file.path},
                       {"origin", p.file.origin},
                       {"shadowed", p.file.shadowed},
                       {"pluginValue", p.pluginValue.empty() ? Json(nullptr) : Json(p.pluginValue)},
                       {"loads", p.loads()},
                       {"error", p.opened ? Json(nullptr) : Json(p.error)},
                       {"tables", tables},
                       {"releases", releases}});
  }
  Json j = Json::object();
  j["tool"] = "ncclnet-info";
  j["searchPlaces"] = listing.places;
  j["plugins"] = plugins;
  j["exitCode"] = listExitCode(listing);
  out << json::jsonText(j) << '\n';
}

}  // namespace ncclnet::info
