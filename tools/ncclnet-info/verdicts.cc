// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: judging one request against several NCCL releases.
#include "verdicts.hpp"

#include <strings.h>

#include <memory>

#include "plugin_log.hpp"

namespace ncclnet::info {

namespace {

constexpr const char* kDefaultReleases[] = {"2.23", "2.28", "2.30"};

// Why nothing external was assigned: the last library that opened says
// more than the names that did not exist.
std::string whyNotLoaded(const host::LoadReport& r) {
  if (r.entries.empty()) return r.outcome;
  for (auto a = r.attempts.rbegin(); a != r.attempts.rend(); ++a) {
    if (a->opened) return a->path + ": " + a->verdict;
  }
  std::string files;
  for (const host::LibraryAttempt& a : r.attempts) files += (files.empty() ? "" : ", ") + a.file;
  return "no library found (dlopen " + files + ")";
}

ReleaseVerdict judge(const Options& options, const host::NcclRelease& release,
                     ncclDebugLogger_t logger) {
  host::NcclBehaviour b = host::behaviourOf(release);
  host::LoaderOptions lo;
  lo.pluginList = options.plugin;
  lo.netName = options.net;
  lo.oldestVersion = b.oldestVersion;
  lo.newestVersion = b.newestVersion;
  // Not --abi: a verdict is about the release as it ships.
  lo.nameRules = b.nameRules;
  lo.logger = Logger(logger, kLoaderLogPrefix, NCCL_INIT);
  host::Loader loader(lo);
  std::unique_ptr<host::LoadedPlugin> loaded;
  ncclResult_t res = loader.load(&loaded);

  ReleaseVerdict v;
  v.release = release.text();
  v.report = loader.report();
  if (res == ncclSuccess && loaded) {
    v.outcome = Outcome::Loads;
    v.version = loaded->version();
    v.table = loaded->name() ? loaded->name() : "";
    v.path = loaded->path();
    return v;
  }
  const host::LoadReport& r = loader.report();
  v.outcome = res == ncclInvalidUsage ? Outcome::Fails : Outcome::Internal;
  if (strcasecmp(r.netName.c_str(), "IB") == 0 || strcasecmp(r.netName.c_str(), "Socket") == 0) {
    v.internal = r.netName;
    v.reason = "NCCL_NET=" + r.netName + " names it";
    return v;
  }
  v.reason = whyNotLoaded(r);
  if (!r.netName.empty()) v.reason += "; NCCL_NET=" + r.netName;
  if (!b.nameRules.splitsList && r.pluginList.find(',') != std::string::npos)
    v.reason += "; this release takes NCCL_NET_PLUGIN as one name, commas included";
  return v;
}

}  // namespace

std::vector<std::string> verdictReleases(const Options& options) {
  std::vector<std::string> releases;
  for (const char* text : kDefaultReleases) releases.push_back(host::findNcclRelease(text)->text());
  if (!options.ncclRelease.empty()) {
    bool listed = false;
    for (const std::string& r : releases) listed |= r == options.ncclRelease;
    if (!listed) releases.push_back(options.ncclRelease);
  }
  return releases;
}

std::vector<ReleaseVerdict> judgeReleases(const Options& options,
                                          const std::vector<std::string>& releases,
                                          ncclDebugLogger_t logger) {
  std::vector<ReleaseVerdict> verdicts;
  for (const std::string& text : releases) {
    verdicts.push_back(judge(options, *host::findNcclRelease(text), logger));
  }
  return verdicts;
}

const char* outcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::Loads: return "loads";
    case Outcome::Internal: return "internal";
    case Outcome::Fails: return "fails";
  }
  return "?";
}

std::string verdictLine(const ReleaseVerdict& v) {
  std::string head = "NCCL " + v.release + "  ";
  switch (v.outcome) {
    case Outcome::Loads:
      return head + "loads '" + v.table + "' through ncclNetPlugin_v" + std::to_string(v.version) +
             " (" + v.path + ")";
    case Outcome::Internal:
      if (!v.internal.empty()) return head + "uses its internal " + v.internal + ": " + v.reason;
      return head + "falls back to IB/Socket: " + v.reason;
    case Outcome::Fails: return head + "fails (Failed to initialize any NET plugin): " + v.reason;
  }
  return head;
}

}  // namespace ncclnet::info
