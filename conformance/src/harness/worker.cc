// SPDX-License-Identifier: Apache-2.0
// Worker process body.
#include "harness/worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "harness/crash_report.hpp"
#include "harness/peer.hpp"
#include "harness/wire.hpp"
#include "scenario/plugin_log.hpp"
#include "scenario/registry.hpp"

namespace conformance {

double scaledDeadline(const RunConfig& config, const std::string& scenario) {
  double seconds = config.profile.deadlineFor(scenario);
  // A scenario that waits for a dead peer to surface must outlast that wait.
  const Scenario* s = findScenario(scenario);
  if (s != nullptr && s->rule == Rule::PeerDeathSurfaces)
    seconds = std::max(seconds, config.profile.peerDeathSec + 15);
  if (s != nullptr) seconds = std::max(seconds, s->minDeadlineSec);
  return seconds * config.profile.timeScale;
}

namespace {

// The plugin's calls of NCCL's profiler callback, as NCCL would take them
// with a profiler plugin loaded (src/plugin/profiler.cc).
void checkProfilerEvents() {
  ncclnet::host::ProfilerTally t = ncclnet::host::profilerTally();
  CONF_EXPECT(t.findings == 0, Rule::ProfilerEventsWellFormed,
              "%llu malformed profiler event(s); the first: %s",
              static_cast<unsigned long long>(t.findings), t.firstFinding.c_str());
}

// What the rank's profiler callback received, for the report.
void countProfilerEvents(Peer& peer) {
  ncclnet::host::ProfilerTally t = ncclnet::host::profilerTally();
  if (t.start) peer.count("profilerStart", t.start);
  if (t.stop) peer.count("profilerStop", t.stop);
  if (t.update) peer.count("profilerUpdate", t.update);
  if (t.updateAndStop) peer.count("profilerUpdateAndStop", t.updateAndStop);
}

// Runs the body and the final teardown; returns how the rank ended (the
// coordinator judges it with the other ranks' ends: harness/verdict.hpp).
RankResult runRank(const Scenario& scenario, const WorkerSpec& spec, const RunConfig& config,
                   Peer& peer) {
  std::string who = "rank " + std::to_string(spec.rank) + ": ";
  try {
    ncclnet::host::LoaderOptions options;
    options.pluginList = config.plugin;
    options.netName = config.netName;
    options.nameRules = config.nameRules;
    options.pinnedVersion = spec.version;
    options.checkInit = false;  // scenarios make every call themselves
    options.logger = ncclnet::Logger(pluginLogger(), "ncclnet-conformance");
    ncclnet::host::Loader loader(options);
    std::unique_ptr<ncclnet::host::LoadedPlugin> plugin;
    peer.activity("loading the plugin");
    if (loader.load(&plugin) != ncclSuccess) {
      fail(Rule::TablesExported, "cannot load '%s' through ncclNetPlugin_v%d: %s",
           config.plugin.c_str(), spec.version, loader.report().outcome.c_str());
    }
    {
      Ctx ctx(*plugin, peer, config.profile, scaledDeadline(config, scenario.fullName()),
              config.ncclNewest);
      ctx.setUnloader([&plugin] { plugin.reset(); });
      // Judged before the rank started too, on what the probe saw; this
      // rank's own table and host have the last word.
      if (asksThePlugin(scenario.needs)) {
        auto unmet =
            unmetRequirement(scenario.needs, capabilitiesOf(ctx, scenario.needs), spec.rank, 1);
        if (unmet) skip("%s", unmet->c_str());
      }
      scenario.run(ctx);
      checkProfilerEvents();
      // Nobody tears down while another rank may still use the connection.
      ctx.barrier("end of scenario");
      ctx.raiseDeferred();
      peer.activity("closing every comm and registration (teardown)");
    }
    peer.activity("unloading the plugin");
    plugin.reset();
    checkProfilerEvents();
    return {RankEnd::Passed, scenario.rule, false, ""};
  } catch (const Violation& v) {
    return {RankEnd::BrokeRule, v.rule, false, ruleLabel(v.rule) + ": " + who + v.message};
  } catch (const Skip& s) {
    return {RankEnd::Skipped, scenario.rule, false, who + s.reason};
  } catch (const PeerLost& lost) {
    return {RankEnd::LostPeer, scenario.rule, false,
            ruleLabel(scenario.rule) + ": " + who + "stopped because " + lost.why};
  } catch (const std::exception& e) {
    return {RankEnd::BrokeRule, scenario.rule, /*alwaysFails=*/true,
            ruleLabel(scenario.rule) + ": " + who + "unexpected exception: " + e.what()};
  }
}

}  // namespace

std::string encodeWorkerSpec(const WorkerSpec& spec) {
  return std::to_string(spec.runId) + "," + spec.scenario + "," + std::to_string(spec.version) +
         "," + std::to_string(spec.rank) + "," + std::to_string(spec.ranks) + "," +
         spec.controlHost + "," + std::to_string(spec.controlPort);
}

bool decodeWorkerSpec(const std::string& text, WorkerSpec* spec) {
  std::vector<std::string> f;
  size_t start = 0;
  for (size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
    f.push_back(text.substr(start, comma - start));
  f.push_back(text.substr(start));
  if (f.size() != 7) return false;
  try {
    spec->runId = std::stoull(f[0]);
    spec->scenario = f[1];
    spec->version = std::stoi(f[2]);
    spec->rank = std::stoi(f[3]);
    spec->ranks = std::stoi(f[4]);
    spec->controlHost = f[5];
    spec->controlPort = std::stoi(f[6]);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

int execWorker(const std::vector<std::string>& args, const WorkerSpec& spec) {
  std::vector<std::string> all(args);
  all.push_back("--exec-worker=" + encodeWorkerSpec(spec));
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  std::fprintf(stderr, "ncclnet-conformance: rank %d of %s: cannot exec a fresh process: %s\n",
               spec.rank, spec.scenario.c_str(), std::strerror(errno));
  return 1;
}

int runWorker(const WorkerSpec& spec, const RunConfig& config) {
  const Scenario* scenario = findScenario(spec.scenario);
  std::string error;
  int fd = connectTcp(spec.controlHost, spec.controlPort, 30, &error);
  if (fd < 0 || scenario == nullptr) {
    std::fprintf(stderr, "ncclnet-conformance: rank %d of %s: %s\n", spec.rank,
                 spec.scenario.c_str(), scenario ? error.c_str() : "unknown scenario");
    return 2;
  }
  crash::arm(fd);  // from here on, a crash is reported before the process ends
  auto channel = std::make_unique<Channel>(fd);
  channel->send(Msg::Hello, Writer().u64(spec.runId).u32(static_cast<uint32_t>(spec.rank)).data());
  Peer peer(std::move(channel), spec.rank, spec.ranks);
  RankResult result = runRank(*scenario, spec, config, peer);
  std::string warnings = recentPluginWarnings();
  if (result.end == RankEnd::BrokeRule && !warnings.empty())
    result.text += " [plugin log: " + warnings + "]";
  countProfilerEvents(peer);
  peer.sendCounters();
  peer.verdict(result, firstFailureMs());
  crash::disarm();  // what follows is the process's own orderly end
  // The exit status says the same as the verdict of this rank alone.
  std::string reason;
  Verdict alone = judge({result}, &reason);
  if (alone == Verdict::NotRun) return kExitSkip;
  return alone == Verdict::Pass || alone == Verdict::Warn ? 0 : 1;
}

}  // namespace conformance
