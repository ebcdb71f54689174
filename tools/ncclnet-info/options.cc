// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: command-line parsing.
#include "options.hpp"

#include <cstdlib>

#include "ncclnet/abi/net.h"
#include "ncclnet/host/loader.hpp"

namespace ncclnet::info {

const char* usageText() {
  return "usage: ncclnet-info [--plugin X] [--net NAME] [--nccl RELEASE] [--abi N]\n"
         "                    [--json] [--params] [--list] [--version] [--help]\n"
         "\n"
         "Shows which network plugin NCCL would load, why, and what the plugin reports,\n"
         "with one verdict line for each of NCCL 2.23, 2.28 and 2.30.\n"
         "\n"
         "  --plugin X    use X instead of NCCL_NET_PLUGIN (same syntax: a suffix, a file\n"
         "                name or path, a comma-separated list, or 'none')\n"
         "  --net NAME    use NAME instead of NCCL_NET (matches the plugin's name field)\n"
         "  --nccl V      emulate NCCL release V (e.g. 2.23, 2.28.9, 2.30): the ABI versions\n"
         "                it accepts and how it reads NCCL_NET_PLUGIN (one name before\n"
         "                2.27.3, a comma-separated list since)\n"
         "  --abi N       accept exactly ncclNetPlugin_vN (6..12)\n"
         "  --json        print one JSON object instead of text\n"
         "  --params      list the environment knobs the plugin declares, with their\n"
         "                defaults and current values (also when its init fails)\n"
         "  --list        list every libnccl-net*.so on the library search path, the\n"
         "                tables each exports and whether it loads\n"
         "  --version     print the tool's version and the SDK commit it was built from\n"
         "  --help        print this text\n"
         "\n"
         "exit status: 0 a plugin loaded, 1 nothing loadable, 2 usage error,\n"
         "             3 loaded but init or devices() failed when inspected\n";
}

namespace {

// "--opt value" or "--opt=value". Returns false when the option is not `name`.
bool takeValue(const std::vector<std::string>& args, size_t* i, const std::string& name,
               std::optional<std::string>* value, std::string* error) {
  const std::string& arg = args[*i];
  if (arg == name) {
    if (*i + 1 >= args.size()) {
      *error = name + " needs a value";
      return true;
    }
    *value = args[++*i];
    return true;
  }
  if (arg.compare(0, name.size() + 1, name + "=") == 0) {
    *value = arg.substr(name.size() + 1);
    return true;
  }
  return false;
}

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

bool parseOptions(const std::vector<std::string>& args, Options* out, std::string* error) {
  Options o;
  o.oldest = NCCLNET_ABI_OLDEST;
  o.newest = NCCLNET_ABI_NEWEST;
  std::optional<std::string> nccl, abi;
  for (size_t i = 0; i < args.size() && error->empty(); i++) {
    const std::string& arg = args[i];
    if (arg == "--json")
      o.json = true;
    else if (arg == "--params")
      o.params = true;
    else if (arg == "--list")
      o.list = true;
    else if (arg == "--version")
      o.version = true;
    else if (arg == "--help" || arg == "-h")
      o.help = true;
    else if (takeValue(args, &i, "--plugin", &o.plugin, error))
      continue;
    else if (takeValue(args, &i, "--net", &o.net, error))
      continue;
    else if (takeValue(args, &i, "--nccl", &nccl, error))
      continue;
    else if (takeValue(args, &i, "--abi", &abi, error))
      continue;
    else
      *error = "unknown argument '" + arg + "'";
  }
  if (!error->empty()) return false;
  if (nccl) {
    o.nccl = *nccl;
    std::optional<host::NcclRelease> release = host::findNcclRelease(o.nccl);
    if (!release) {
      *error = "--nccl " + o.nccl +
               ": not an NCCL release this tool knows; give MAJOR.MINOR or MAJOR.MINOR.PATCH "
               "of one of " +
               host::knownNcclReleasesText();
      return false;
    }
    host::NcclBehaviour behaviour = host::behaviourOf(*release);
    o.ncclRelease = release->text();
    o.oldest = behaviour.oldestVersion;
    o.newest = behaviour.newestVersion;
    o.nameRules = behaviour.nameRules;
  }
  if (abi) {
    if (!parseAbi(*abi, &o.pinned)) {
      *error = "--abi expects a version from " + std::to_string(NCCLNET_ABI_OLDEST) + " to " +
               std::to_string(NCCLNET_ABI_NEWEST) + "; got '" + *abi + "'";
      return false;
    }
    if (o.pinned < o.oldest || o.pinned > o.newest) {
      *error = "--abi " + *abi + " is outside what NCCL " + o.nccl + " accepts (v" +
               std::to_string(o.newest) + "..v" + std::to_string(o.oldest) + ")";
      return false;
    }
  }
  *out = std::move(o);
  return true;
}

}  // namespace ncclnet::info
