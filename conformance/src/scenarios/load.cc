// SPDX-License-Identifier: Apache-2.0
// Load & symbols: the tables NCCL looks for, their names, and a plugin that
// survives being unloaded and loaded again.
#include <dlfcn.h>
#include <strings.h>

#include <memory>

#include "scenario/plugin_log.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

std::unique_ptr<ncclnet::host::LoadedPlugin> loadPinned(const std::string& path, int version) {
  ncclnet::host::LoaderOptions options;
  options.pluginList = path;
  options.netName = std::string();  // every table, whatever its name
  options.pinnedVersion = version;
  options.checkInit = false;
  ncclnet::host::Loader loader(options);
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin;
  if (loader.load(&plugin) != ncclSuccess) {
    fail(Rule::TablesExported, "%s: ncclNetPlugin_v%d is exported but does not load: %s",
         path.c_str(), version, loader.report().outcome.c_str());
  }
  return plugin;
}

void exportsTables(Ctx& c) {
  const std::vector<int>& versions = c.plugin().exportedVersions();
  CONF_EXPECT(!versions.empty(), Rule::TablesExported,
              "no ncclNetPlugin_v6..v12 symbol is exported");
  std::string list;
  for (int v : versions) list += (list.empty() ? "v" : ", v") + std::to_string(v);
  c.note("exports " + list);
  // Every table NCCL may pick must load with RTLD_NOW and carry a name.
  for (int v : versions) loadPinned(c.plugin().path(), v);
}

void nameConsistent(Ctx& c) {
  std::string first;
  for (int v : c.plugin().exportedVersions()) {
    auto plugin = loadPinned(c.plugin().path(), v);
    const char* name = plugin->name();
    CONF_EXPECT(name != nullptr && name[0] != '\0', Rule::NameSetAndConsistent,
                "ncclNetPlugin_v%d has an empty or NULL name", v);
    CONF_EXPECT(strcasecmp(name, "IB") != 0 && strcasecmp(name, "Socket") != 0,
                Rule::NameSetAndConsistent,
                "ncclNetPlugin_v%d is named '%s', the name of an NCCL internal plugin: NCCL_NET=%s "
                "becomes ambiguous",
                v, name, name);
    if (first.empty()) first = name;
    CONF_EXPECT(first == name, Rule::NameSetAndConsistent,
                "ncclNetPlugin_v%d is named '%s' but a newer table is named '%s': NCCL_NET would "
                "select the plugin on one NCCL release and not on another",
                v, name, first.c_str());
  }
}

// True while a library of that path is mapped in this process.
bool resident(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

void reloadAfterUnload(Ctx& c) {
  // NCCL 2.30.3+ closes an external plugin when its last communicator goes
  // and opens it again for the next one (src/plugin/net.cc
  // ncclNetPluginUnload keeps the entry's name). NCCL 2.28 and 2.29 wipe
  // the entry with memset and never load that plugin again in the process.
  if (c.ncclNewestVersion() < 12) {
    c.note("the emulated NCCL (ABI window up to v" + std::to_string(c.ncclNewestVersion()) +
           ") never loads a plugin again once it was unloaded: nothing to check");
    return;
  }
  std::string path = c.plugin().path();
  int version = c.version();
  c.unloadPlugin();  // c.plugin() and c.net() are gone from here on
  if (resident(path)) {
    c.note(
        "the library stays mapped after its last dlclose (RTLD_NODELETE, or unique C++ "
        "symbols): NCCL's reload then calls init again on the same image");
  }
  for (int cycle = 1; cycle <= 3; cycle++) {
    auto plugin = loadPinned(path, version);
    void* context = nullptr;
    ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
    c.activity(format("init() after reload #%d", cycle));
    CONF_OK(plugin->net().init(&context, 0x77 + cycle, &config, pluginLogger(),
                               ncclnet::host::profilerCallback()),
            Rule::ReloadAfterUnload, format("init() after unload and reload #%d", cycle));
    int ndev = 0;
    c.activity(format("devices() after reload #%d", cycle));
    CONF_OK(plugin->net().devices(&ndev), Rule::ReloadAfterUnload,
            format("devices() after reload #%d", cycle));
    CONF_EXPECT(ndev >= 1, Rule::ReloadAfterUnload,
                "devices() reported %d devices after reload #%d", ndev, cycle);
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    c.activity(format("listen() after reload #%d", cycle));
    CONF_OK(plugin->net().listen(context, 0, handle, &listenComm), Rule::ReloadAfterUnload,
            format("listen() after reload #%d", cycle));
    CONF_OK(plugin->net().closeListen(listenComm), Rule::ReloadAfterUnload,
            format("closeListen() after reload #%d", cycle));
    c.activity(format("finalize() after reload #%d", cycle));
    CONF_OK(plugin->net().finalize(context), Rule::ReloadAfterUnload,
            format("finalize() after reload #%d", cycle));
    c.activity(format("dlclose after reload #%d", cycle));
  }
}

}  // namespace

void addLoadScenarios(std::vector<Scenario>& out) {
  out.push_back({.area = "Load",
                 .name = "ExportsVersionedTables",
                 .rule = Rule::TablesExported,
                 .ranks = 1,
                 .run = exportsTables,
                 .summary = "every exported ncclNetPlugin_vN loads with RTLD_NOW"});
  out.push_back({.area = "Load",
                 .name = "NameIsSetAndConsistent",
                 .rule = Rule::NameSetAndConsistent,
                 .ranks = 1,
                 .run = nameConsistent,
                 .summary = "every table has the same non-empty name, not IB or Socket"});
  // In a process of its own: the coordinator keeps the plugin's libraries
  // loaded for the forked ranks, which would keep them from unloading here.
  out.push_back(
      {.area = "Load",
       .name = "ReloadAfterUnload",
       .rule = Rule::ReloadAfterUnload,
       .ranks = 1,
       .run = reloadAfterUnload,
       .summary = "init/devices/listen/finalize work after dlclose and a new dlopen (NCCL 2.30.3+)",
       .freshProcess = true});
}

}  // namespace conformance
