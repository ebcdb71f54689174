// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host side): NCCL's plugin resolution, step by step.
#include "ncclnet/host/loader.hpp"

#include <dlfcn.h>
#include <link.h>
#include <strings.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace ncclnet::host {

namespace {

constexpr int kMaxExternalEntries = 14;  // NCCL_NET_MAX_PLUGINS - 2
constexpr size_t kMaxEntryLength = 254;
constexpr const char* kStaticPlugin = "STATIC_PLUGIN";

// NCCL compares only strlen(entry) characters, so any case-insensitive
// prefix of STATIC_PLUGIN means "the program itself".
bool namesStaticPlugin(const std::string& entry) {
  return !entry.empty() && entry.size() <= std::strlen(kStaticPlugin) &&
         strncasecmp(entry.c_str(), kStaticPlugin, entry.size()) == 0;
}

bool endsWith(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string resolvedPath(void* library) {
  struct link_map* map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return "";
  return map->l_name ? map->l_name : "";
}

std::string describeVersions(int oldest, int newest) {
  return "v" + std::to_string(newest) + "..v" + std::to_string(oldest);
}

// "MAJOR.MINOR" or "MAJOR.MINOR.PATCH", digits only.
bool parseNcclVersion(const std::string& text, int* major, int* minor) {
  if (text.empty() || text.back() == '.' || text.size() > 16) return false;
  std::vector<int> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, '.')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return false;
    parts.push_back(std::stoi(part));
  }
  if (parts.size() < 2 || parts.size() > 3) return false;
  *major = parts[0];
  *minor = parts[1];
  return true;
}

}  // namespace

bool abiWindowForNccl(const std::string& text, int* oldest, int* newest) {
  int major = 0, minor = 0;
  if (!parseNcclVersion(text, &major, &minor) || major != 2) return false;
  if (minor < 19) return false;
  *oldest = 6;
  if (minor <= 19) *newest = 7;
  else if (minor <= 23) *newest = 8;
  else if (minor <= 25) *newest = 9;
  else if (minor <= 27) *newest = 10;
  else if (minor <= 29) *newest = 11;
  else *newest = 12;
  return true;
}

LoadedPlugin::LoadedPlugin(void* library, std::string path, std::vector<int> exported,
                           std::unique_ptr<NetView> view)
    : library_(library), path_(std::move(path)), exported_(std::move(exported)),
      view_(std::move(view)) {}

LoadedPlugin::~LoadedPlugin() {
  view_.reset();
  if (library_ != nullptr) dlclose(library_);
}

Loader::Loader(LoaderOptions options) : options_(std::move(options)) {}

std::vector<std::string> Loader::entriesFor(const std::optional<std::string>& pluginList) {
  if (!pluginList.has_value()) return {"libnccl-net.so"};
  if (strcasecmp(pluginList->c_str(), "none") == 0) return {};
  std::vector<std::string> entries;
  std::stringstream stream(*pluginList);
  std::string entry;
  while (std::getline(stream, entry, ',')) {
    if (entry.empty() || entry.size() > kMaxEntryLength) continue;
    if (static_cast<int>(entries.size()) == kMaxExternalEntries) break;
    entries.push_back(entry);
  }
  return entries;
}

std::vector<std::string> Loader::filesForEntry(const std::string& entry) {
  if (namesStaticPlugin(entry)) return {""};
  std::vector<std::string> files{entry};
  bool isLibName = entry.compare(0, 3, "lib") == 0 && endsWith(entry, ".so");
  if (entry.find('/') == std::string::npos && !isLibName) {
    files.push_back("libnccl-net-" + entry + ".so");
  }
  return files;
}

ncclResult_t Loader::load(std::unique_ptr<LoadedPlugin>* out) {
  out->reset();
  report_ = LoadReport{};
  std::optional<std::string> pluginList = options_.pluginList;
  report_.pluginListSource = "option";
  if (!pluginList.has_value()) {
    const char* env = std::getenv("NCCL_NET_PLUGIN");
    if (env != nullptr) pluginList = std::string(env);
    report_.pluginListSource = env ? "environment" : "default";
  }
  report_.pluginList = pluginList.value_or("(unset)");
  std::optional<std::string> netName = options_.netName;
  if (!netName.has_value()) {
    const char* env = std::getenv("NCCL_NET");
    if (env != nullptr) netName = std::string(env);
  }
  report_.netName = netName.value_or("");
  report_.oldestVersion = options_.pinnedVersion ? options_.pinnedVersion : options_.oldestVersion;
  report_.newestVersion = options_.pinnedVersion ? options_.pinnedVersion : options_.newestVersion;
  report_.entries = entriesFor(pluginList);

  NCCLNET_INFO(options_.logger, NCCL_INIT, "NCCL_NET_PLUGIN=%s (%s), accepting %s",
               report_.pluginList.c_str(), report_.pluginListSource.c_str(),
               describeVersions(report_.oldestVersion, report_.newestVersion).c_str());
  if (report_.entries.empty()) {
    report_.outcome = "NCCL_NET_PLUGIN=none: no external plugin is loaded";
    return ncclSystemError;
  }
  for (const std::string& entry : report_.entries) {
    for (const std::string& file : filesForEntry(entry)) {
      if (tryFile(entry, file, out)) {
        report_.outcome = "selected " + (*out)->path() + ": table '" + (*out)->name() +
                          "' through ncclNetPlugin_v" + std::to_string((*out)->version());
        NCCLNET_INFO(options_.logger, NCCL_INIT, "%s", report_.outcome.c_str());
        return ncclSuccess;
      }
      if (report_.attempts.back().opened) break;  // opened but unusable: next entry
    }
  }
  // NCCL_NET may name one of NCCL's internal transports, which NCCL then uses.
  if (strcasecmp(report_.netName.c_str(), "IB") == 0 ||
      strcasecmp(report_.netName.c_str(), "Socket") == 0) {
    report_.outcome = "no external plugin is named '" + report_.netName +
                      "': NCCL_NET selects NCCL's internal " + report_.netName + " transport";
    NCCLNET_INFO(options_.logger, NCCL_INIT, "%s", report_.outcome.c_str());
    return ncclSystemError;
  }
  if (!report_.netName.empty()) {
    report_.outcome = "no library provides a usable plugin named '" + report_.netName +
                      "' (NCCL_NET): NCCL fails with 'Failed to initialize any NET plugin'";
    NCCLNET_WARN(options_.logger, "%s", report_.outcome.c_str());
    return ncclInvalidUsage;
  }
  report_.outcome =
      "no usable external plugin: NCCL would fall back to its internal IB, then Socket";
  NCCLNET_INFO(options_.logger, NCCL_INIT, "%s", report_.outcome.c_str());
  return ncclSystemError;
}

bool Loader::tryFile(const std::string& entry, const std::string& file,
                     std::unique_ptr<LoadedPlugin>* out) {
  report_.attempts.emplace_back();
  LibraryAttempt& attempt = report_.attempts.back();
  attempt.entry = entry;
  attempt.file = file;
  void* library = dlopen(file.empty() ? nullptr : file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    attempt.error = error ? error : "unknown dlopen error";
    attempt.verdict = "dlopen failed";
    NCCLNET_INFO(options_.logger, NCCL_INIT, "dlopen(%s): %s", file.c_str(), attempt.error.c_str());
    return false;
  }
  attempt.opened = true;
  attempt.path = file.empty() ? "(program)" : resolvedPath(library);

  const void* chosen = nullptr;
  std::vector<int> exported;
  for (int v = NCCLNET_ABI_NEWEST; v >= NCCLNET_ABI_OLDEST; --v) {
    std::string symbol = "ncclNetPlugin_v" + std::to_string(v);
    const void* table = dlsym(library, symbol.c_str());
    attempt.symbols.push_back(SymbolProbe{v, table != nullptr});
    if (table == nullptr) continue;
    exported.push_back(v);
    if (chosen == nullptr && v >= report_.oldestVersion && v <= report_.newestVersion) {
      chosen = table;
      attempt.version = v;
    }
  }
  auto unusable = [&](const std::string& why) {
    attempt.verdict = why;
    NCCLNET_INFO(options_.logger, NCCL_INIT, "%s: %s", attempt.path.c_str(), why.c_str());
    dlclose(library);
    return false;
  };
  if (chosen == nullptr) {
    return unusable(exported.empty()
                        ? "exports no ncclNetPlugin_v6..v12 symbol (External network plugin is unsupported)"
                        : "exports no version in the accepted window " +
                              describeVersions(report_.oldestVersion, report_.newestVersion));
  }
  std::unique_ptr<NetView> view = makeNetView(attempt.version, chosen, options_.logger);
  const char* name = view->name();
  if (name == nullptr) return unusable("ncclNetPlugin_v" + std::to_string(attempt.version) + " has a NULL name");
  attempt.tableName = name;
  if (!report_.netName.empty() && strcasecmp(report_.netName.c_str(), name) != 0) {
    return unusable("table name '" + attempt.tableName + "' does not match NCCL_NET=" + report_.netName);
  }
  if (options_.checkInit && !assignable(*view, attempt)) return unusable(attempt.verdict);
  attempt.selected = true;
  attempt.verdict = "selected (ncclNetPlugin_v" + std::to_string(attempt.version) + ")";
  out->reset(new LoadedPlugin(library, attempt.path, std::move(exported), std::move(view)));
  return true;
}

// NCCL's assignment: init for a communicator, devices() >= 1, and device 0
// of a type this NCCL can drive. The plugin is finalized again afterwards.
bool Loader::assignable(NetView& net, LibraryAttempt& attempt) {
  void* ctx = nullptr;
  ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  ncclResult_t res =
      net.init(&ctx, 0, &config, loggerFunction(options_.logger), profilerCallback());
  if (res != ncclSuccess) {
    attempt.verdict = "init failed with error " + std::to_string(res) + " (Failed to initialize NET plugin)";
    return false;
  }
  int ndev = 0;
  res = net.devices(&ndev);
  attempt.devices = res == ncclSuccess ? ndev : -1;
  bool ok = true;
  if (res != ncclSuccess || ndev <= 0) {
    attempt.verdict = res != ncclSuccess ? "devices() failed with error " + std::to_string(res)
                                         : "devices() reported 0 devices";
    ok = false;
  } else {
    ncclNetProperties_v12_t props;
    res = net.getProperties(0, &props);
    if (res != ncclSuccess) {
      attempt.verdict = "getProperties(0) failed with error " + std::to_string(res);
      ok = false;
    } else if (props.netDeviceType == NCCL_NET_DEVICE_UNPACK &&
               props.netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION) {
      attempt.verdict = "device 0 is UNPACK version " + std::to_string(props.netDeviceVersion) +
                        ", NCCL accepts only version " + std::to_string(NCCL_NET_DEVICE_UNPACK_VERSION);
      ok = false;
    } else if (props.netDeviceType != NCCL_NET_DEVICE_HOST &&
               props.netDeviceType != NCCL_NET_DEVICE_UNPACK) {
      attempt.verdict = "device 0 has unknown netDeviceType " + std::to_string(props.netDeviceType);
      ok = false;
    }
  }
  net.finalize(ctx);
  return ok;
}

}  // namespace ncclnet::host
