// SPDX-License-Identifier: Apache-2.0
// Loads a plugin through the installed SDK's Loader and prints what it found.
#include <cstdio>
#include <memory>

#include <ncclnet/host/loader.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hello_host <plugin>\n");
    return 2;
  }
  ncclnet::host::LoaderOptions options;
  options.pluginList = argv[1];
  options.netName = "";
  ncclnet::host::Loader loader(options);
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin;
  if (loader.load(&plugin) != ncclSuccess) {
    std::printf("not loaded: %s\n", loader.report().outcome.c_str());
    return 1;
  }
  ncclNetProperties_v12_t props;
  void* ctx = nullptr;
  ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  plugin->net().init(&ctx, 0, &config, ncclnet::host::stderrLogger(),
                     ncclnet::host::profilerCallback());
  plugin->net().getProperties(0, &props);
  std::printf("loaded %s v%d device0=%s\n", plugin->name(), plugin->version(), props.name);
  plugin->net().finalize(ctx);
  return 0;
}
