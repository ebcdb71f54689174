// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: load the plugin as NCCL would, then ask it about itself.
#include "inspection.hpp"

#include <algorithm>

#include "checks.hpp"
#include "plugin_log.hpp"
#include "published_params.hpp"

namespace ncclnet::info {

namespace {

// A broken devices() may report any count; past this the tool stops asking.
constexpr int kMaxInspectedDevices = 1024;

std::vector<OptionalSlot> optionalSlots(host::NetView& net) {
  struct Known {
    host::Optional op;
    int since;
  };
  static constexpr Known kKnown[] = {
      {host::Optional::RegMrDmaBuf, 6},   {host::Optional::GetDeviceMr, 7},
      {host::Optional::IrecvConsumed, 7}, {host::Optional::MakeVDevice, 9},
      {host::Optional::SetNetAttr, 11},
  };
  std::vector<OptionalSlot> slots;
  for (const Known& k : kKnown) {
    SlotState state = net.version() < k.since ? SlotState::NotInVersion
                      : net.provides(k.op)    ? SlotState::Provided
                                              : SlotState::Null;
    slots.push_back(OptionalSlot{host::optionalName(k.op), k.since, state});
  }
  return slots;
}

DeviceInfo describeDevice(host::NetView& net, int dev) {
  DeviceInfo d;
  d.index = dev;
  d.status = net.getProperties(dev, &d.props);
  if (d.status != ncclSuccess) return d;
  // Copy the strings now: they point into the plugin, which is unloaded
  // before the report is printed.
  if (d.props.name != nullptr) d.name = d.props.name;
  if (d.props.pciPath != nullptr) d.pciPath = d.props.pciPath;
  d.props.name = nullptr;
  d.props.pciPath = nullptr;
  return d;
}

// init, devices, getProperties for every device, finalize: the calls NCCL
// makes on a communicator's first use of the plugin.
void describePlugin(host::LoadedPlugin& loaded, Inspection* out) {
  PluginInfo& p = out->plugin;
  host::NetView& net = loaded.net();
  p.name = loaded.name() ? loaded.name() : "";
  p.path = loaded.path();
  p.version = loaded.version();
  p.exported = loaded.exportedVersions();
  p.optional = optionalSlots(net);

  void* ctx = nullptr;
  ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  p.initResult =
      net.init(&ctx, /*commId=*/0, &config, host::captureLogger, ncclnet::host::profilerCallback());
  if (p.initResult != ncclSuccess) return;  // NCCL would not call finalize either (2.29.7+)
  p.devicesResult = net.devices(&p.deviceCount);
  if (p.devicesResult == ncclSuccess) {
    int shown = std::min(p.deviceCount, kMaxInspectedDevices);
    for (int dev = 0; dev < shown; dev++) p.devices.push_back(describeDevice(net, dev));
  }
  p.finalizeResult = net.finalize(ctx);
}

// The library whose other tables are listed: the one selected, else the
// last one that opened (NCCL would not select its net table).
const host::LibraryAttempt* tablesLibrary(const host::LoadReport& report) {
  for (const host::LibraryAttempt& a : report.attempts)
    if (a.selected) return &a;
  for (auto a = report.attempts.rbegin(); a != report.attempts.rend(); ++a)
    if (a->opened) return &*a;
  return nullptr;
}

// The releases whose view of the other tables is shown: --nccl's, else
// every release line with GIN or RMA tables.
std::vector<std::string> tablesReleases(const Options& options) {
  if (!options.ncclRelease.empty()) return {options.ncclRelease};
  std::vector<std::string> releases;
  for (const host::NcclRelease& r : host::extraTableReleases()) releases.push_back(r.text());
  return releases;
}

// Opens the library again, only to look its tables up, and asks each
// release's report what NCCL's net loader left of it.
OtherTables describeOtherTables(const host::LoadReport& report,
                                const std::vector<ReleaseVerdict>& judged) {
  OtherTables t;
  const host::LibraryAttempt* a = tablesLibrary(report);
  if (a == nullptr) return t;
  t.library = a->path;
  std::unique_ptr<host::OpenedLibrary> library =
      host::OpenedLibrary::open(a->file.empty() ? "" : a->path, &t.error);
  if (!library) return t;
  auto has = [&](const std::string& symbol) { return library->symbol(symbol.c_str()) != nullptr; };
  t.exported = host::exportedExtraTables(has);
  for (const ReleaseVerdict& v : judged) {
    host::NetLibrary net = host::netLibraryIn(v.report, a->path);
    t.releases.push_back(ReleaseTables{
        v.release, host::extraTablesTaken(*host::findNcclRelease(v.release), has, net)});
  }
  return t;
}

}  // namespace

Inspection inspect(const Options& options) {
  Inspection out;
  out.options = options;
  host::LoaderOptions lo;
  lo.pluginList = options.plugin;
  lo.netName = options.net;
  lo.oldestVersion = options.oldest;
  lo.newestVersion = options.newest;
  lo.pinnedVersion = options.pinned;
  lo.nameRules = options.nameRules;
  lo.checkInit = true;
  // The Loader's own check initializes the plugin too. An SDK plugin driven
  // through v6..v10 stays initialized from then on, so it reports its knobs
  // only to this first logger: capture that one as well.
  lo.logger = Logger(host::captureLogger, kLoaderLogPrefix, NCCL_INIT);

  host::Loader loader(lo);
  std::unique_ptr<host::LoadedPlugin> loaded;
  ncclResult_t res = loader.load(&loaded);
  out.report = loader.report();
  out.loaded = res == ncclSuccess && loaded != nullptr;
  if (out.loaded) {
    describePlugin(*loaded, &out);
    loaded.reset();  // unload now, as NCCL does when its last communicator goes
    const PluginInfo& p = out.plugin;
    bool inspected = p.initResult == ncclSuccess && p.devicesResult == ncclSuccess;
    out.exitCode = inspected ? kExitLoaded : kExitInspectFailed;
    out.warnings = checkPlugin(p);
  }
  sortCapturedLines(host::takeCapturedLines(), &out);
  // The Loader called init where it selected a plugin, counted devices, or
  // names init as the reason it passed one over.
  for (const host::LibraryAttempt& a : out.report.attempts) {
    out.pluginInitialized |= a.selected || a.devices >= 0 || a.verdict.rfind("init failed", 0) == 0;
  }
  // A table published in the file lists every knob, whether or not init ran.
  readPublishedParams(&out);
  // One run per release, for both the verdicts and the other tables. Each
  // initializes the plugin again; those lines would only repeat the ones
  // above.
  std::vector<std::string> verdictNames = verdictReleases(options);
  std::vector<std::string> tableNames = tablesReleases(options);
  std::vector<std::string> names = verdictNames;
  for (const std::string& r : tableNames)
    if (std::find(names.begin(), names.end(), r) == names.end()) names.push_back(r);
  std::vector<ReleaseVerdict> judged = judgeReleases(options, names, host::captureLogger);
  host::takeCapturedLines();
  std::vector<ReleaseVerdict> forTables;
  for (const std::string& r : tableNames) {
    for (const ReleaseVerdict& v : judged)
      if (v.release == r) forTables.push_back(v);
  }
  out.otherTables = describeOtherTables(out.report, forTables);
  for (const ReleaseVerdict& v : judged) {
    if (std::find(verdictNames.begin(), verdictNames.end(), v.release) != verdictNames.end())
      out.verdicts.push_back(v);
  }
  return out;
}

}  // namespace ncclnet::info
