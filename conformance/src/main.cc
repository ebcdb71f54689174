// SPDX-License-Identifier: Apache-2.0
// ncclnet-conformance: certifies an NCCL net plugin against the contract
// NCCL relies on. Rank 0 probes the plugin, registers one gtest per
// scenario and ABI version, and runs each across fresh rank processes;
// other world ranks (mpirun/srun) act as agents that start ranks on their node.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "harness/agent.hpp"
#include "harness/coordinator.hpp"
#include "harness/worker.hpp"
#include "ncclnet/host/build_info.hpp"
#include "options.hpp"
#include "probe.hpp"
#include "replay/sources.hpp"
#include "report/junit.hpp"
#include "report/progress.hpp"
#include "report/provenance.hpp"
#include "report/report.hpp"
#include "report/sha256.hpp"
#include "report/summary.hpp"
#include "scenario/registry.hpp"
#include "suite.hpp"

namespace conformance {
namespace {

// Keeps the libraries the plugin links against (libfabric, libibverbs and
// theirs) loaded in this process. The ranks of every scenario are forked
// from it and would otherwise load them, run their constructors and
// relocate them again each time, which for some costs more than the
// scenario. The plugin itself is unloaded again: each rank still loads it
// afresh (and Load.ReloadAfterUnload still unloads it). Called only once
// the probe has loaded the plugin safely in a child.
void keepPluginDependencies(const std::string& path) {
  void* plugin = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (plugin == nullptr) return;
  link_map* map = nullptr;
  if (dlinfo(plugin, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr) {
    // Libraries after the plugin in the link map were loaded with it.
    for (link_map* dep = map->l_next; dep != nullptr; dep = dep->l_next) {
      if (dep->l_name != nullptr && dep->l_name[0] != '\0') {
        dlopen(dep->l_name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
      }
    }
  }
  dlclose(plugin);
}

// The JSON and JUnit reports that were asked for; false if one could not
// be written (said on stderr).
bool writeReports(const Report& report, const Options& opt) {
  bool ok = true;
  std::string error;
  if (!opt.jsonPath.empty() && !report.writeJson(opt.jsonPath, &error)) {
    std::fprintf(stderr, "ncclnet-conformance: %s\n", error.c_str());
    ok = false;
  }
  if (!opt.junitPath.empty() && !writeJunit(report, opt.junitPath, &error)) {
    std::fprintf(stderr, "ncclnet-conformance: %s\n", error.c_str());
    ok = false;
  }
  return ok;
}

constexpr double kProbeTimeoutSec = 60;
constexpr double kJoinTimeoutSec = 300;

void listCatalogue() {
  std::printf("| scenario | rule | ranks | ABI | checks |\n|---|---|---|---|---|\n");
  for (const Scenario& s : catalogue()) {
    std::string ranks = s.ranks == kRanksOfTheTrace ? "per trace" : std::to_string(s.ranks);
    std::printf("| `%s` | %s | %s | %s | %s |\n", s.fullName().c_str(), ruleLabel(s.rule).c_str(),
                ranks.c_str(), abiRangeText(s.needs).c_str(), s.summary);
  }
}

// One line a rule: number, name, severity, and the scenarios whose own rule
// it is (docs/contract.md must agree; a test checks).
void listRules() {
  for (const RuleInfo& info : allRules()) {
    std::string scenarios;
    for (const Scenario& s : catalogue()) {
      if (s.rule == info.rule) scenarios += (scenarios.empty() ? "" : ",") + s.fullName();
    }
    std::printf("%d %s %s %s\n", ruleNumber(info.rule), info.name, severityName(info.severity),
                scenarios.empty() ? "-" : scenarios.c_str());
  }
}

// The versions to run: what NCCL would pick, every exported one in the
// window (all), every one from vN up (vN+), or the one asked for.
bool chooseVersions(const std::string& abi, const PluginInfo& info, int oldest, int newest,
                    std::vector<int>* out, std::string* error) {
  if (abi.empty()) {
    out->push_back(info.selectedVersion);
    return true;
  }
  bool andNewer = abi.size() > 2 && abi.back() == '+';
  int from = andNewer ? std::atoi(abi.c_str() + 1) : 0;
  if (andNewer && (abi[0] != 'v' || from < NCCLNET_ABI_OLDEST)) {
    *error = "--abi " + abi + ": expected all, vN or vN+ with N in 6..12";
    return false;
  }
  for (int v : info.exported) {
    bool inWindow = v >= oldest && v <= newest;
    if (abi == "all" || andNewer ? inWindow && v >= from : abi == "v" + std::to_string(v)) {
      if (!inWindow) {
        *error = "--abi " + abi + " is outside the emulated NCCL's window v" +
                 std::to_string(oldest) + "..v" + std::to_string(newest);
        return false;
      }
      out->push_back(v);
    }
  }
  if (out->empty()) *error = "--abi " + abi + ": the plugin exports no such version in the window";
  return !out->empty();
}

// --summary [--verbose] REPORT.json...: its own small command line.
int summaryMode(const std::vector<std::string>& args) {
  bool verbose = false;
  std::vector<std::string> reports;
  auto app = ncclnet::cli::makeApp(
      "ncclnet-conformance", "ncclnet-conformance --summary [--verbose] REPORT.json...",
      "Prints each JSON report's result line.", "exit status: 0 every report passed, 1 one failed");
  app->add_flag("--summary", "");
  app->add_flag("--verbose", verbose, "also what did not pass, and the counters");
  app->add_option("reports", reports, "JSON reports (--json)")->type_name("REPORT.json");
  if (std::optional<int> exit = ncclnet::cli::parse(*app, args)) return *exit;
  if (reports.empty())
    return ncclnet::cli::usageError("ncclnet-conformance", "--summary needs a JSON report or more");
  return printReportSummaries(reports, verbose);
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "--summary") return summaryMode(args);
  const std::vector<std::string> commandLine(argv, argv + argc);  // for the report
  // gtest's flags go to gtest; the suite parses the rest first, so that its
  // --help is printed before gtest would print its own.
  std::vector<std::string> gtestFlags = splitGtestFlags(&args);
  std::vector<char*> ours{argv[0]};
  for (std::string& a : args) ours.push_back(a.data());
  Options opt;
  ncclnet::cli::Parsed parsed = parseOptions(int(ours.size()), ours.data(), &opt);
  if (parsed.kind == ncclnet::cli::Parsed::Kind::kHelp) {
    std::fputs(parsed.text.c_str(), stdout);
    return 0;
  }
  if (parsed.kind == ncclnet::cli::Parsed::Kind::kError)
    return ncclnet::cli::usageError("ncclnet-conformance", parsed.text);
  if (opt.version) {
    std::printf("%s\n", ncclnet::host::versionLine("ncclnet-conformance").c_str());
    return 0;
  }
  std::vector<char*> gtestArgv{argv[0]};
  for (std::string& f : gtestFlags) gtestArgv.push_back(f.data());
  int gtestArgc = int(gtestArgv.size());
  gtestArgv.push_back(nullptr);
  testing::InitGoogleTest(&gtestArgc, gtestArgv.data());
  if (gtestArgc > 1)  // a --gtest_ flag gtest does not know
    return ncclnet::cli::usageError("ncclnet-conformance",
                                    "unknown argument '" + std::string(gtestArgv[1]) + "'");
  GTEST_FLAG_SET(filter, qualifyFilter(GTEST_FLAG_GET(filter)));
  if (opt.list) {
    listCatalogue();
    return 0;
  }
  if (opt.listRules) {
    listRules();
    return 0;
  }
  RunConfig config;
  std::string error;
  if (opt.profilePath && !loadProfile(*opt.profilePath, &config.profile, &error)) {
    std::fprintf(stderr, "ncclnet-conformance: malformed profile: %s\n", error.c_str());
    return 2;
  }
  Profile& profile = config.profile;
  if (opt.timeScale) profile.timeScale = *opt.timeScale;
  if (opt.deadline) profile.deadlineSec = *opt.deadline;
  profile.strict = profile.strict || opt.strict;
  if (opt.device) profile.device = *opt.device;
  if (opt.replayDir) {
    // Refused here, once, with the one line that says why; every rank
    // reads the same directory again.
    replay::Plan plan;
    if (!replay::planFromDirectory(*opt.replayDir, &plan, &error)) {
      std::fprintf(stderr, "ncclnet-conformance: %s\n", error.c_str());
      return 2;
    }
    profile.replayDir = *opt.replayDir;
    profile.replayRanks = static_cast<int>(plan.ranks.size());
  }
  if (opt.printEnv) {
    // For the jobs that run the plugin outside the suite (inside NCCL, or
    // wrapped by ncclnet-check) under the environment it is certified with.
    for (const auto& [name, value] : profile.env)
      std::printf("%s=%s\n", name.c_str(), value.c_str());
    return 0;
  }
  for (const auto& [name, value] : profile.env) setenv(name.c_str(), value.c_str(), 1);
  const char* envPlugin = std::getenv("NCCL_NET_PLUGIN");
  if (opt.plugin)
    config.plugin = *opt.plugin;
  else if (profile.plugin)
    config.plugin = *profile.plugin;
  else if (envPlugin)
    config.plugin = envPlugin;
  else {
    return ncclnet::cli::usageError(
        "ncclnet-conformance",
        "no plugin: give --plugin, the profile's 'plugin' or NCCL_NET_PLUGIN");
  }
  config.netName = opt.netName;
  // What a rerun is given: the options of this run, with the plugin it
  // tests named outright (it may have come from the environment).
  Options again = opt;
  again.plugin = config.plugin;
  int oldest = NCCLNET_ABI_OLDEST, newest = NCCLNET_ABI_NEWEST;
  std::string nccl = opt.nccl.value_or(profile.nccl.value_or(""));
  if (!nccl.empty()) {
    std::optional<ncclnet::host::NcclRelease> release = ncclnet::host::findNcclRelease(nccl);
    if (!release) {
      std::fprintf(stderr,
                   "ncclnet-conformance: --nccl %s is not an NCCL release this SDK knows; known: "
                   "%s\n",
                   nccl.c_str(), ncclnet::host::knownNcclReleasesText().c_str());
      return 2;
    }
    ncclnet::host::NcclBehaviour behaviour = ncclnet::host::behaviourOf(*release);
    oldest = behaviour.oldestVersion;
    newest = behaviour.newestVersion;
    config.nameRules = behaviour.nameRules;
  }
  config.ncclOldest = oldest;
  config.ncclNewest = newest;
  if (!opt.execWorker.empty()) {
    WorkerSpec spec;
    if (!decodeWorkerSpec(opt.execWorker, &spec)) {
      std::fprintf(stderr, "ncclnet-conformance: --exec-worker '%s' is malformed\n",
                   opt.execWorker.c_str());
      return 2;
    }
    return runWorker(spec, config);
  }
  WorkerEntry entry = [&config, &commandLine](const WorkerSpec& spec) {
    const Scenario* scenario = findScenario(spec.scenario);
    if (scenario != nullptr && scenario->freshProcess) return execWorker(commandLine, spec);
    return runWorker(spec, config);
  };

  std::string host;
  int port = 0;
  if (opt.size > 1 && !splitAddress(opt.rendezvous, &host, &port)) {
    std::fprintf(stderr, "ncclnet-conformance: rendezvous '%s' is not HOST:PORT\n",
                 opt.rendezvous.c_str());
    return 2;
  }
  if (opt.rank != 0) return runAgent(host, port, opt.rank, kJoinTimeoutSec, entry);

  double start = nowSeconds();
  Report report;
  report.provenance = collectProvenance("", profile.path);
  report.request = config.plugin;
  report.profilePath = profile.path;
  report.ncclWindow = "v" + std::to_string(oldest) + "..v" + std::to_string(newest);
  report.worldSize = opt.size;
  report.strict = profile.strict;
  report.plugin = probePlugin(config.plugin, config.netName, oldest, newest, config.nameRules,
                              kProbeTimeoutSec);
  // The file the probe loaded; when it could not say (it crashed while
  // loading), the file the request names, if it names one.
  std::string loadedFile = report.plugin.path.empty() ? config.plugin : report.plugin.path;
  report.provenance.pluginSha256 = sha256OfFile(loadedFile);
  std::string abi = opt.abi.value_or(profile.abi.value_or(""));
  if (!report.plugin.loaded ||
      !chooseVersions(abi, report.plugin, oldest, newest, &report.versions, &error)) {
    // A plugin with no devices loads fine: say plainly that NCCL would
    // not use it, under the rule it breaks, rather than "cannot load".
    Rule rule = report.plugin.noDevices ? Rule::DevicesReported : Rule::TablesExported;
    if (report.plugin.noDevices)
      error = "'" + config.plugin +
              "' loads, but devices() reported 0 devices: NCCL passes it over and falls back "
              "to its internal transports (IB, then Socket); nothing else can be tested";
    else if (!report.plugin.loaded)
      error = "cannot load '" + config.plugin + "': " + report.plugin.error;
    std::fprintf(stderr, "ncclnet-conformance: %s\n", error.c_str());
    report.plugin.error = error;
    TestResult load;
    load.test = "Load.PluginLoads";
    load.scenario = "Load.PluginLoads";
    load.rule = rule;
    load.verdict = Verdict::Fail;
    load.reason = ruleLabel(rule) + ": " + error;
    load.rerun = rerunCommand(again, "");
    report.results.push_back(load);
    report.seconds = nowSeconds() - start;
    writeReports(report, opt);
    printSummary(report, opt.jsonPath, opt.junitPath);
    return 1;
  }

  keepPluginDependencies(report.plugin.path);
  Coordinator coordinator(entry);
  bool local = opt.size == 1;
  if (!coordinator.open(local ? "127.0.0.1" : "", local ? 0 : port, local ? "127.0.0.1" : host,
                        opt.size, kJoinTimeoutSec, &error)) {
    std::fprintf(stderr, "ncclnet-conformance: %s\n", error.c_str());
    return 2;
  }
  Suite suite{&coordinator, &config, &report, again};
  registerSuite(&suite, report.versions);

  testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  bool redraw = isatty(STDOUT_FILENO) != 0 && !opt.noProgress && std::getenv("CI") == nullptr;
  listeners.Append(new Progress(report, opt.verbose, redraw));
  int rc = RUN_ALL_TESTS();
  coordinator.shutdown();
  report.seconds = nowSeconds() - start;
  if (report.results.empty()) {
    // A filter that matches nothing must not look like a clean pass in CI.
    std::fprintf(stderr,
                 "ncclnet-conformance: no scenario was selected (--gtest_filter, --abi and the "
                 "profile's scenarios.include/exclude match none; --list names them)\n");
    return 2;
  }
  if (!writeReports(report, opt)) rc = 1;
  printSummary(report, opt.jsonPath, opt.junitPath);
  return report.passed() && rc == 0 ? 0 : 1;
}

}  // namespace
}  // namespace conformance

int main(int argc, char** argv) {
  return conformance::run(argc, argv);
}
