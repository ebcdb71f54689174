// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: command-line parsing.
#include "options.hpp"

#include <cstdlib>

#include "ncclnet/abi/net.h"
#include "ncclnet/host/loader.hpp"

namespace ncclnet::info {

namespace {

constexpr const char* kDescription =
    "Shows which network plugin NCCL would load, why, and what the plugin reports,\n"
    "with one verdict line for each of NCCL 2.23, 2.28 and 2.30.";

constexpr const char* kFooter =
    "exit status: 0 a plugin loaded, 1 nothing loadable, 2 usage error,\n"
    "             3 loaded but init or devices() failed when inspected";

bool parseAbi(const std::string& text, int* out) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < NCCLNET_ABI_OLDEST || v > NCCLNET_ABI_NEWEST) {
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

cli::Parsed parseOptions(const std::vector<std::string>& args, Options* out) {
  Options o;
  o.oldest = NCCLNET_ABI_OLDEST;
  o.newest = NCCLNET_ABI_NEWEST;
  std::string plugin, net, ncclText, abiText;
  auto app = cli::makeApp("ncclnet-info",
                          "ncclnet-info [--plugin X] [--net NAME] [--nccl RELEASE] [--abi N]\n"
                          "                    [--json] [--params] [--list] [--version] [--help]",
                          kDescription, kFooter);
  app->add_option("--plugin", plugin,
                  "use X instead of NCCL_NET_PLUGIN (same syntax: a suffix, a file\n"
                  "name or path, a comma-separated list, or 'none')")
      ->type_name("X");
  app->add_option("--net", net, "use NAME instead of NCCL_NET (matches the plugin's name field)")
      ->type_name("NAME");
  app->add_option("--nccl", ncclText,
                  "emulate NCCL release V (e.g. 2.23, 2.28.9, 2.30): the ABI versions\n"
                  "it accepts and how it reads NCCL_NET_PLUGIN (one name before\n"
                  "2.27.3, a comma-separated list since)")
      ->type_name("V");
  app->add_option("--abi", abiText, "accept exactly ncclNetPlugin_vN (6..12)")->type_name("N");
  app->add_flag("--json", o.json, "print one JSON object instead of text");
  app->add_flag("--params", o.params,
                "list the environment knobs the plugin declares, with their\n"
                "defaults and current values (also when its init fails)");
  app->add_flag("--list", o.list,
                "list every libnccl-net*.so on the library search path, the\n"
                "tables each exports and whether it loads");
  app->add_flag("--version", o.version,
                "print the tool's version and the SDK commit it was built from");
  cli::Parsed parsed = cli::tryParse(*app, args);
  if (parsed.kind != cli::Parsed::Kind::kRun) return parsed;
  auto error = [](std::string what) {
    return cli::Parsed{cli::Parsed::Kind::kError, std::move(what)};
  };
  if (app->count("--plugin")) o.plugin = plugin;
  if (app->count("--net")) o.net = net;
  std::optional<std::string> nccl, abi;
  if (app->count("--nccl")) nccl = ncclText;
  if (app->count("--abi")) abi = abiText;
  if (nccl) {
    o.nccl = *nccl;
    std::optional<host::NcclRelease> release = host::findNcclRelease(o.nccl);
    if (!release) {
      return error("--nccl " + o.nccl +
                   ": not an NCCL release this tool knows; give MAJOR.MINOR or "
                   "MAJOR.MINOR.PATCH of one of " +
                   host::knownNcclReleasesText());
    }
    host::NcclBehaviour behaviour = host::behaviourOf(*release);
    o.ncclRelease = release->text();
    o.oldest = behaviour.oldestVersion;
    o.newest = behaviour.newestVersion;
    o.nameRules = behaviour.nameRules;
  }
  if (abi) {
    if (!parseAbi(*abi, &o.pinned)) {
      return error("--abi expects a version from " + std::to_string(NCCLNET_ABI_OLDEST) + " to " +
                   std::to_string(NCCLNET_ABI_NEWEST) + "; got '" + *abi + "'");
    }
    if (o.pinned < o.oldest || o.pinned > o.newest) {
      return error("--abi " + *abi + " is outside what NCCL " + o.nccl + " accepts (v" +
                   std::to_string(o.newest) + "..v" + std::to_string(o.oldest) + ")");
    }
  }
  *out = std::move(o);
  return {};
}

}  // namespace ncclnet::info
