// SPDX-License-Identifier: Apache-2.0
// A rank's process: joins the control channel, loads the plugin fresh (so
// every scenario starts from a pristine plugin), runs its part of the
// scenario and reports the verdict.
#pragma once

#include "ncclnet/host/loader.hpp"

#include <optional>
#include <string>
#include <vector>

#include "harness/launch.hpp"
#include "ncclnet/abi/net.h"
#include "profile/profile.hpp"

namespace conformance {

// What every process of a run agrees on (same command line everywhere).
struct RunConfig {
  std::string plugin;                  // NCCL_NET_PLUGIN-style entry or list
  std::optional<std::string> netName;  // NCCL_NET; nullopt: the environment's
  Profile profile;
  // The ABI window of the NCCL being emulated (--nccl): 2.28 is v6..v11.
  int ncclOldest = NCCLNET_ABI_OLDEST;
  int ncclNewest = NCCLNET_ABI_NEWEST;
  // How that NCCL reads NCCL_NET_PLUGIN (one name before 2.27.3, a list since).
  ncclnet::host::PluginNameRules nameRules{};
};

int runWorker(const WorkerSpec& spec, const RunConfig& config);

// A rank in a process image of its own: the forked child exec's this
// program again with `args` (the command line it was started with) and
// --exec-worker, for scenarios that must see the plugin's libraries as NCCL
// would, never loaded before in the process. Returns only on failure.
int execWorker(const std::vector<std::string>& args, const WorkerSpec& spec);
// The --exec-worker value, both ways.
std::string encodeWorkerSpec(const WorkerSpec& spec);
bool decodeWorkerSpec(const std::string& text, WorkerSpec* spec);

// The scenario's deadline in seconds, time scale applied.
double scaledDeadline(const RunConfig& config, const std::string& scenario);

}  // namespace conformance
