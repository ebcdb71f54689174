// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: shared explanations.
#include "explain.hpp"

namespace ncclnet::info {

std::string windowText(int oldest, int newest) {
  if (oldest == newest) return "v" + std::to_string(newest);
  return "v" + std::to_string(newest) + "..v" + std::to_string(oldest);
}

std::vector<std::pair<int, std::string>> skippedVersions(const host::LibraryAttempt& attempt,
                                                         int oldest, int newest) {
  std::vector<std::pair<int, std::string>> skipped;
  for (const host::SymbolProbe& probe : attempt.symbols) {
    if (!probe.found || probe.version == attempt.version) continue;
    std::string why;
    if (probe.version > newest) {
      why = "above the accepted window " + windowText(oldest, newest);
    } else if (probe.version < oldest) {
      why = "below the accepted window " + windowText(oldest, newest);
    } else {
      why = "v" + std::to_string(attempt.version) + " was found first (newest first)";
    }
    skipped.emplace_back(probe.version, why);
  }
  return skipped;
}

std::string choiceText(const host::LibraryAttempt& attempt, int oldest, int newest) {
  if (attempt.version == 0) return "none in " + windowText(oldest, newest);
  if (oldest == newest) return "v" + std::to_string(attempt.version) + " (pinned)";
  return "v" + std::to_string(attempt.version) + ": newest exported version in " +
         windowText(oldest, newest);
}

namespace {

std::string describeAttempt(const host::LibraryAttempt& a) {
  std::string file = a.file.empty() ? "the program itself" : "\"" + a.file + "\"";
  if (!a.opened) return "dlopen(" + file + ") failed: " + a.error;
  return "dlopen(" + file + ") opened " + a.path + ", but it " +
         (a.verdict.compare(0, 7, "exports") == 0 ? "" : "was passed over: ") + a.verdict;
}

// What an operator should look at, given how the attempts failed.
std::string hint(const Inspection& in) {
  const host::LoadReport& r = in.report;
  if (r.entries.empty()) return "Unset NCCL_NET_PLUGIN or name a plugin to load one.";
  bool anyOpened = false;
  for (const host::LibraryAttempt& a : r.attempts) anyOpened |= a.opened;
  if (!anyOpened) {
    return "Check the name, put the library's directory on LD_LIBRARY_PATH, or give a full "
           "path.";
  }
  if (!r.netName.empty()) {
    return "NCCL_NET must equal (ignoring case) the name field of the plugin's table, not the "
           "library name.";
  }
  return "Fix the plugin as the verdict above says, or point NCCL_NET_PLUGIN at another "
         "library.";
}

}  // namespace

std::string failureExplanation(const Inspection& in) {
  const host::LoadReport& r = in.report;
  std::string source = r.pluginListSource == "option"        ? "given with --plugin"
                       : r.pluginListSource == "environment" ? "from the environment"
                                                             : "NCCL's default";
  std::string text =
      r.pluginListSource == "default"
          ? "Nothing loadable. NCCL_NET_PLUGIN is unset, which NCCL reads as "
            "libnccl-net.so: that"
          : "Nothing loadable. NCCL_NET_PLUGIN=" + r.pluginList + " (" + source + ")";
  if (r.entries.empty()) {
    text += " disables external plugins.";
  } else {
    text += " gives " + std::to_string(r.entries.size()) +
            (r.entries.size() == 1 ? " entry" : " entries") + "; NCCL tried, in order: ";
    for (size_t i = 0; i < r.attempts.size(); i++) {
      text += (i ? "; " : "") + describeAttempt(r.attempts[i]);
    }
    text += ". Accepted: ncclNetPlugin_" + windowText(r.oldestVersion, r.newestVersion);
    if (!in.options.ncclRelease.empty()) text += " (NCCL " + in.options.ncclRelease + ")";
    if (!r.netName.empty()) text += " with a table named '" + r.netName + "' (NCCL_NET)";
    text += ".";
  }
  text += " Outcome: " + in.report.outcome + ".";
  text += " " + hint(in);
  return text;
}

std::string binarySizeText(size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes == 0) return "";
  int unit = 0;
  while (bytes % 1024 == 0 && unit < 6) {
    bytes /= 1024;
    unit++;
  }
  if (unit == 0) return "";
  return std::to_string(bytes) + " " + kUnits[unit];
}

}  // namespace ncclnet::info
