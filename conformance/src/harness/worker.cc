// SPDX-License-Identifier: Apache-2.0
// Worker process body.
#include "harness/worker.hpp"

#include <cstdio>
#include <memory>

#include "harness/peer.hpp"
#include "harness/wire.hpp"
#include "scenario/plugin_log.hpp"
#include "scenario/registry.hpp"

namespace conformance {

double scaledDeadline(const RunConfig& config, const std::string& scenario) {
  return config.profile.deadlineFor(scenario) * config.profile.timeScale;
}

namespace {

// Runs the body and the final teardown; returns the verdict.
std::pair<uint32_t, std::string> runRank(const Scenario& scenario, const WorkerSpec& spec,
                                         const RunConfig& config, Peer& peer) {
  std::string who = "rank " + std::to_string(spec.rank) + ": ";
  try {
    ncclnet::host::LoaderOptions options;
    options.pluginList = config.plugin;
    options.netName = config.netName;
    options.pinnedVersion = spec.version;
    options.checkInit = false;  // scenarios make every call themselves
    options.logger = ncclnet::Logger(pluginLogger(), "ncclnet-conformance");
    ncclnet::host::Loader loader(options);
    std::unique_ptr<ncclnet::host::LoadedPlugin> plugin;
    peer.activity("loading the plugin");
    if (loader.load(&plugin) != ncclSuccess) {
      fail(1, "cannot load '%s' through ncclNetPlugin_v%d: %s", config.plugin.c_str(), spec.version,
           loader.report().outcome.c_str());
    }
    {
      Ctx ctx(*plugin, peer, config.profile, scaledDeadline(config, scenario.fullName()));
      scenario.run(ctx);
      // Nobody tears down while another rank may still use the connection.
      ctx.barrier("end of scenario");
      peer.activity("closing every comm and registration (teardown)");
    }
    peer.activity("unloading the plugin");
    plugin.reset();
    return {kVerdictPass, ""};
  } catch (const Violation& v) {
    return {kVerdictFail, ruleLabel(v.rule) + ": " + who + v.message};
  } catch (const Skip& s) {
    return {kVerdictSkip, who + s.reason};
  } catch (const PeerLost& lost) {
    return {kVerdictLost, ruleLabel(scenario.rule) + ": " + who + "stopped because " + lost.why};
  } catch (const std::exception& e) {
    return {kVerdictFail,
            ruleLabel(scenario.rule) + ": " + who + "unexpected exception: " + e.what()};
  }
}

}  // namespace

int runWorker(const WorkerSpec& spec, const RunConfig& config) {
  const Scenario* scenario = findScenario(spec.scenario);
  std::string error;
  int fd = connectTcp(spec.controlHost, spec.controlPort, 30, &error);
  if (fd < 0 || scenario == nullptr) {
    std::fprintf(stderr, "ncclnet-conformance: rank %d of %s: %s\n", spec.rank,
                 spec.scenario.c_str(), scenario ? error.c_str() : "unknown scenario");
    return 2;
  }
  auto channel = std::make_unique<Channel>(fd);
  channel->send(Msg::Hello, Writer().u64(spec.runId).u32(static_cast<uint32_t>(spec.rank)).data());
  Peer peer(std::move(channel), spec.rank, spec.ranks);
  auto [kind, text] = runRank(*scenario, spec, config, peer);
  std::string warnings = recentPluginWarnings();
  if (kind == kVerdictFail && !warnings.empty()) text += " [plugin log: " + warnings + "]";
  peer.sendCounters();
  peer.verdict(kind, text, firstFailureMs());
  return kind == kVerdictSkip ? kExitSkip : (kind == kVerdictPass ? 0 : 1);
}

}  // namespace conformance
