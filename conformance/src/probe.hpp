// SPDX-License-Identifier: Apache-2.0
// What the report says about the plugin (path, name, exported versions, the
// properties of every device), learned in a child process so that a plugin
// that crashes while loading is reported instead of ending the run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"
#include "scenario/requirements.hpp"

namespace conformance {

struct PluginInfo {
  bool loaded = false;
  std::string error;  // why not, when !loaded
  std::string path;
  std::string name;
  int selectedVersion = 0;    // what NCCL (the emulated window) picks
  std::vector<int> exported;  // newest first
  std::string devicesJson;    // JSON array, one devicePropertiesJson per device
  std::string loadOutcome;
  // What scenarios' requirements are judged on before their ranks start:
  // device 0 through the selected table, and the host's GPUs, learned with
  // the CUDA driver opened before the plugin, as a rank that uses GPU
  // memory opens it.
  Capabilities capabilities;
  // It loaded and NCCL's checks ran, but devices() reported no device: NCCL
  // passes such a plugin over and uses its internal transports.
  bool noDevices = false;
};

// Loads the plugin as the emulated NCCL would (its ABI window and its rules
// for reading NCCL_NET_PLUGIN), in a child that may crash.
PluginInfo probePlugin(const std::string& plugin, const std::optional<std::string>& netName,
                       int oldestVersion, int newestVersion,
                       const ncclnet::host::PluginNameRules& nameRules, double timeoutSec);

}  // namespace conformance
