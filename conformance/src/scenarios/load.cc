// SPDX-License-Identifier: Apache-2.0
// Load & symbols: the tables NCCL looks for, their names, and a plugin that
// survives being unloaded and loaded again.
#include <strings.h>

#include <memory>

#include "scenario/plugin_log.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

std::unique_ptr<ncclnet::host::LoadedPlugin> loadPinned(Ctx& c, int version) {
  ncclnet::host::LoaderOptions options;
  options.pluginList = c.plugin().path();
  options.netName = std::string();  // every table, whatever its name
  options.pinnedVersion = version;
  options.checkInit = false;
  ncclnet::host::Loader loader(options);
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin;
  if (loader.load(&plugin) != ncclSuccess) {
    fail(1, "%s: ncclNetPlugin_v%d is exported but does not load: %s", c.plugin().path().c_str(),
         version, loader.report().outcome.c_str());
  }
  return plugin;
}

void exportsTables(Ctx& c) {
  const std::vector<int>& versions = c.plugin().exportedVersions();
  CONF_EXPECT(!versions.empty(), 1, "no ncclNetPlugin_v6..v12 symbol is exported");
  std::string list;
  for (int v : versions) list += (list.empty() ? "v" : ", v") + std::to_string(v);
  c.note("exports " + list);
  // Every table NCCL may pick must load with RTLD_NOW and carry a name.
  for (int v : versions) loadPinned(c, v);
}

void nameConsistent(Ctx& c) {
  std::string first;
  for (int v : c.plugin().exportedVersions()) {
    auto plugin = loadPinned(c, v);
    const char* name = plugin->name();
    CONF_EXPECT(name != nullptr && name[0] != '\0', 2,
                "ncclNetPlugin_v%d has an empty or NULL name", v);
    CONF_EXPECT(strcasecmp(name, "IB") != 0 && strcasecmp(name, "Socket") != 0, 2,
                "ncclNetPlugin_v%d is named '%s', the name of an NCCL internal plugin: NCCL_NET=%s "
                "becomes ambiguous",
                v, name, name);
    if (first.empty()) first = name;
    CONF_EXPECT(first == name, 2,
                "ncclNetPlugin_v%d is named '%s' but a newer table is named '%s': NCCL_NET would "
                "select the plugin on one NCCL release and not on another",
                v, name, first.c_str());
  }
}

void reloadAfterUnload(Ctx& c) {
  // NCCL unloads a plugin when its last communicator goes and may load it
  // again for the next one; the library's state must allow that.
  for (int cycle = 1; cycle <= 3; cycle++) {
    auto plugin = loadPinned(c, c.version());
    void* context = nullptr;
    ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
    c.activity(format("init() after reload #%d", cycle));
    CONF_OK(plugin->net().init(&context, 0x77 + cycle, &config, pluginLogger(), nullptr), 3,
            format("init() after unload and reload #%d", cycle));
    int ndev = 0;
    CONF_OK(plugin->net().devices(&ndev), 4, format("devices() after reload #%d", cycle));
    CONF_EXPECT(ndev >= 1, 4, "devices() reported %d devices after reload #%d", ndev, cycle);
    CONF_OK(plugin->net().finalize(context), 3, format("finalize() after reload #%d", cycle));
  }
}

}  // namespace

void addLoadScenarios(std::vector<Scenario>& out) {
  out.push_back({"Load", "ExportsVersionedTables", 1, 1, 6, exportsTables,
                 "every exported ncclNetPlugin_vN loads with RTLD_NOW"});
  out.push_back({"Load", "NameIsSetAndConsistent", 2, 1, 6, nameConsistent,
                 "every table has the same non-empty name, not IB or Socket"});
  out.push_back({"Load", "ReloadAfterUnload", 3, 1, 6, reloadAfterUnload,
                 "init/devices/finalize work after dlclose and a new dlopen"});
}

}  // namespace conformance
