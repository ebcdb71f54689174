// SPDX-License-Identifier: Apache-2.0
// A rank's process: joins the control channel, loads the plugin fresh (so
// every scenario starts from a pristine plugin), runs its part of the
// scenario and reports the verdict.
#pragma once

#include <optional>
#include <string>

#include "harness/launch.hpp"
#include "profile/profile.hpp"

namespace conformance {

// What every process of a run agrees on (same command line everywhere).
struct RunConfig {
  std::string plugin;                  // NCCL_NET_PLUGIN-style entry or list
  std::optional<std::string> netName;  // NCCL_NET; nullopt: the environment's
  Profile profile;
};

int runWorker(const WorkerSpec& spec, const RunConfig& config);

// The scenario's deadline in seconds, time scale applied.
double scaledDeadline(const RunConfig& config, const std::string& scenario);

}  // namespace conformance
