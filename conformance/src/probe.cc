// SPDX-License-Identifier: Apache-2.0
// Plugin probe, run in a child process.
#include "probe.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "device_json.hpp"
#include "harness/crash_report.hpp"
#include "harness/launch.hpp"
#include "harness/wire.hpp"
#include "ncclnet/host/loader.hpp"
#include "scenario/plugin_log.hpp"

namespace conformance {

namespace {

// What getProperties left, copied while the plugin is still loaded.
ncclnet::json::DeviceProperties deviceProperties(int dev, ncclResult_t status,
                                                 const ncclNetProperties_v12_t& p) {
  ncclnet::json::DeviceProperties d;
  d.index = dev;
  d.status = status;
  d.props = p;
  if (status == ncclSuccess && p.name) d.name = p.name;
  if (status == ncclSuccess && p.pciPath) d.pciPath = p.pciPath;
  return d;
}

// Child: loads as NCCL would and writes the findings, one field a line.
int probeChild(int fd, const std::string& plugin, const std::optional<std::string>& netName,
               int oldest, int newest, const ncclnet::host::PluginNameRules& nameRules) {
  ncclnet::host::LoaderOptions options;
  options.pluginList = plugin;
  options.netName = netName;
  options.nameRules = nameRules;
  options.oldestVersion = oldest;
  options.newestVersion = newest;
  options.logger = ncclnet::Logger(pluginLogger(), "ncclnet-conformance");
  ncclnet::host::Loader loader(options);
  std::unique_ptr<ncclnet::host::LoadedPlugin> loaded;
  crash::setActivity("opening the CUDA driver, if there is one");
  GpuFacts gpus = GpuFacts::ofThisProcess();
  crash::setActivity(
      "loading the plugin (dlopen, then NCCL's checks: init, devices, "
      "getProperties(0), finalize)");
  ncclResult_t res = loader.load(&loaded);
  Writer out;
  out.u32(res == ncclSuccess).str(loader.report().outcome);
  if (res == ncclSuccess) {
    out.str(loaded->path()).str(loaded->name()).u32(static_cast<uint32_t>(loaded->version()));
    out.u32(static_cast<uint32_t>(loaded->exportedVersions().size()));
    for (int v : loaded->exportedVersions()) out.u32(static_cast<uint32_t>(v));
    ncclnet::json::Json devices = ncclnet::json::Json::array();
    void* ctx = nullptr;
    ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
    int ndev = 0;
    Capabilities caps;
    caps.version = loaded->version();
    caps.regMrDmaBuf = loaded->net().provides(ncclnet::host::Optional::RegMrDmaBuf);
    crash::setActivity("init, devices and getProperties of every device (the probe)");
    if (loaded->net().init(&ctx, 1, &config, pluginLogger(), ncclnet::host::profilerCallback()) ==
            ncclSuccess &&
        loaded->net().devices(&ndev) == ncclSuccess) {
      for (int d = 0; d < ndev; d++) {
        ncclNetProperties_v12_t p{};
        ncclResult_t got = loaded->net().getProperties(d, &p);
        devices.push_back(
            ncclnet::json::devicePropertiesJson(deviceProperties(d, got, p), loaded->version()));
        if (got != ncclSuccess || d != 0) continue;
        caps.ptrSupport = p.ptrSupport;
        caps.maxRecvs = p.maxRecvs;
        caps.netDeviceType = static_cast<int>(p.netDeviceType);
      }
      loaded->net().finalize(ctx);
    }
    out.str(ncclnet::json::jsonText(devices));
    out.u32(static_cast<uint32_t>(caps.ptrSupport)).u32(static_cast<uint32_t>(caps.maxRecvs));
    out.u32(static_cast<uint32_t>(caps.netDeviceType)).u32(caps.regMrDmaBuf);
    out.u32(loaded->symbol("ncclRmaPlugin_v14") != nullptr);
    out.u32(loaded->symbol("ncclCollNetPlugin_v12") != nullptr ||
            loaded->symbol("ncclCollNetPlugin_v11") != nullptr);
    out.u32(gpus.available).str(gpus.whyNot).u32(static_cast<uint32_t>(gpus.driverVersion));
    out.u32(static_cast<uint32_t>(gpus.exportsDmaBuf.size()));
    for (bool exports : gpus.exportsDmaBuf) out.u32(exports);
  } else {
    // Name every attempt: which file, and why it was passed over.
    std::string why;
    bool noDevices = false;
    for (const auto& a : loader.report().attempts) {
      noDevices = noDevices || (a.opened && a.version > 0 && a.devices == 0);
      why += "\n    " + (a.file.empty() ? std::string("(program)") : a.file) + ": " +
             (a.opened ? a.verdict : a.error);
    }
    out.str(why).u32(noDevices);
  }
  const std::string& data = out.data();
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = write(fd, data.data() + done, data.size() - done);
    if (w <= 0) return 1;
    done += static_cast<size_t>(w);
  }
  return 0;
}

}  // namespace

PluginInfo probePlugin(const std::string& plugin, const std::optional<std::string>& netName,
                       int oldestVersion, int newestVersion,
                       const ncclnet::host::PluginNameRules& nameRules, double timeoutSec) {
  PluginInfo info;
  int fds[2], crashFds[2];
  if (pipe(fds) != 0) {
    info.error = "cannot create a pipe";
    return info;
  }
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, crashFds) != 0) {
    close(fds[0]);
    close(fds[1]);
    info.error = "cannot create a pipe";
    return info;
  }
  WorkerSpec unused;
  pid_t pid = forkWorker(unused, [&](const WorkerSpec&) {
    close(fds[0]);
    close(crashFds[0]);
    crash::arm(crashFds[1]);
    return probeChild(fds[1], plugin, netName, oldestVersion, newestVersion, nameRules);
  });
  close(fds[1]);
  close(crashFds[1]);
  // What the child's crash reporter said, once it is gone (never blocks:
  // the write end is closed by then).
  auto crashReport = [&]() -> std::string {
    Channel crashes(crashFds[0]);
    crashFds[0] = -1;
    crashes.readAvailable();
    Frame frame;
    std::string said;
    while (crashes.next(&frame)) {
      // The first report is the cause (a library's handler may exit() after).
      if (frame.type == Msg::Crash && said.empty()) said = crash::describe(frame.body);
    }
    return said;
  };
  std::string data;
  double end = nowSeconds() + timeoutSec;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    double left = end - nowSeconds();
    if (left <= 0) break;
    if (poll(&p, 1, static_cast<int>(left * 1000) + 1) <= 0) continue;
    char chunk[65536];
    ssize_t r = read(fds[0], chunk, sizeof(chunk));
    if (r <= 0) break;
    data.append(chunk, static_cast<size_t>(r));
  }
  close(fds[0]);
  int status = 0;
  bool reaped = pid <= 0;
  while (!reaped && nowSeconds() < end) {
    reaped = waitpid(pid, &status, WNOHANG) == pid;
    if (!reaped) usleep(10000);
  }
  if (!reaped) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    crashReport();
    info.error = "loading the plugin did not finish within " +
                 std::to_string(static_cast<int>(timeoutSec)) + " s";
    return info;
  }
  std::string crashed = crashReport();
  if (pid > 0 &&
      (WIFSIGNALED(status) || (data.empty() && (WEXITSTATUS(status) != 0 || !crashed.empty())))) {
    info.error = "the process loading the plugin " + describeWaitStatus(status) +
                 (crashed.empty() ? "" : ": " + crashed);
    return info;
  }
  Reader in(data);
  info.loaded = in.u32() != 0;
  info.loadOutcome = in.str();
  if (!info.loaded) {
    info.error = info.loadOutcome + in.str();
    info.noDevices = in.u32() != 0;
    if (!in.ok()) info.error = "the plugin probe returned nothing";
    return info;
  }
  info.path = in.str();
  info.name = in.str();
  info.selectedVersion = static_cast<int>(in.u32());
  uint32_t n = in.u32();
  for (uint32_t i = 0; i < n && in.ok(); i++) info.exported.push_back(static_cast<int>(in.u32()));
  info.devicesJson = in.str();
  Capabilities& caps = info.capabilities;
  caps.version = info.selectedVersion;
  caps.exported = info.exported;
  caps.ptrSupport = static_cast<int>(in.u32());
  caps.maxRecvs = static_cast<int>(in.u32());
  caps.netDeviceType = static_cast<int>(in.u32());
  caps.regMrDmaBuf = in.u32() != 0;
  caps.rmaTable = in.u32() != 0;
  caps.collNetTable = in.u32() != 0;
  caps.gpus.available = in.u32() != 0;
  caps.gpus.whyNot = in.str();
  caps.gpus.driverVersion = static_cast<int>(in.u32());
  uint32_t gpuCount = in.u32();
  for (uint32_t i = 0; i < gpuCount && in.ok(); i++)
    caps.gpus.exportsDmaBuf.push_back(in.u32() != 0);
  if (!in.ok()) {
    info.loaded = false;
    info.error = "the plugin probe returned a truncated answer";
  }
  return info;
}

}  // namespace conformance
