// SPDX-License-Identifier: Apache-2.0
// ncclnet-info --list: probing and printing the plugins found.
#include "plugin_list.hpp"

#include <dlfcn.h>

#include <iomanip>

#include "ncclnet/abi/net.h"
#include "ncclnet/host/json_writer.hpp"
#include "ncclnet/host/loader.hpp"
#include "verdicts.hpp"

namespace ncclnet::info {

using host::JsonWriter;

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
  JsonWriter w(out);
  w.beginObject();
  w.key("tool").value("ncclnet-info");
  w.key("searchPlaces").beginArray();
  for (const std::string& place : listing.places) w.value(place);
  w.endArray();
  w.key("plugins").beginArray();
  for (const ListedPlugin& p : listing.plugins) {
    w.beginObject();
    w.key("file").value(p.file.name).key("path").value(p.file.path);
    w.key("origin").value(p.file.origin).key("shadowed").value(p.file.shadowed);
    w.key("pluginValue")
        .value(p.pluginValue.empty() ? std::optional<std::string>() : p.pluginValue);
    w.key("loads").value(p.loads());
    w.key("error").value(p.opened ? std::optional<std::string>() : p.error);
    w.key("tables").beginArray();
    for (const ListedTable& t : p.tables) {
      w.beginObject().key("version").value(t.version).key("name").value(t.name).endObject();
    }
    w.endArray();
    w.key("releases").beginObject();
    for (const auto& [release, version] : p.releases) {
      w.key(release);
      if (version)
        w.value(version);
      else
        w.null();
    }
    w.endObject();
    w.endObject();
  }
  w.endArray();
  w.key("exitCode").value(listExitCode(listing));
  w.endObject();
  out << '\n';
}

}  // namespace ncclnet::info
