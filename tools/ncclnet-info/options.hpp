// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the command line, parsed into what the Loader needs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"
#include "ncclnet_cli.hpp"

namespace ncclnet::info {

// Exit codes, distinct so that scripts can tell the cases apart.
enum ExitCode : int {
  kExitLoaded = 0,           // a plugin loaded (warnings do not change this)
  kExitNothingLoadable = 1,  // no library yields a plugin NCCL would use
  kExitUsage = 2,            // bad command line
  kExitInspectFailed = 3,    // loaded, but init/devices failed when inspected
};

struct Options {
  std::optional<std::string> plugin;  // --plugin: NCCL_NET_PLUGIN syntax; nullopt: environment
  std::optional<std::string> net;     // --net: NCCL_NET; nullopt: environment
  std::string nccl;                   // --nccl as given; "" when absent
  std::string ncclRelease;            // the release it names, e.g. "2.23.4"; "" when absent
  int oldest = 0;                     // the ABI window probed (from --nccl, else all)
  int newest = 0;
  int pinned = 0;                   // --abi: accept exactly this version; 0: any in window
  host::PluginNameRules nameRules;  // how NCCL_NET_PLUGIN is read (from --nccl, else newest)
  bool json = false;
  bool params = false;
  bool list = false;
  bool version = false;
};

// Parses argv (argv[0] excluded) into *out. kHelp carries the --help text;
// kError one line that names the offending argument and what was expected.
cli::Parsed parseOptions(const std::vector<std::string>& args, Options* out);

}  // namespace ncclnet::info
