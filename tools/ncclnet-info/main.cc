// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: shows which network plugin NCCL would load, why, and what
// the plugin reports about itself (docs/tools.md).
#include <iostream>
#include <string>
#include <vector>

#include "inspection.hpp"
#include "json_report.hpp"
#include "ncclnet/host/build_info.hpp"
#include "options.hpp"
#include "plugin_list.hpp"
#include "text_report.hpp"

int main(int argc, char** argv) {
  using namespace ncclnet::info;
  std::vector<std::string> args(argv + 1, argv + argc);
  Options options;
  ncclnet::cli::Parsed parsed = parseOptions(args, &options);
  if (parsed.kind == ncclnet::cli::Parsed::Kind::kHelp) {
    std::cout << parsed.text;
    return kExitLoaded;
  }
  if (parsed.kind == ncclnet::cli::Parsed::Kind::kError)
    return ncclnet::cli::usageError("ncclnet-info", parsed.text);
  if (options.version) {
    std::cout << ncclnet::host::versionLine("ncclnet-info") << '\n';
    return kExitLoaded;
  }
  if (options.list) {
    PluginListing listing = listPlugins();
    if (options.json)
      printListJson(listing, std::cout);
    else
      printListText(listing, std::cout);
    return listExitCode(listing);
  }
  Inspection inspection = inspect(options);
  if (options.json)
    printJson(inspection, std::cout);
  else
    printText(inspection, std::cout);
  return inspection.exitCode;
}
