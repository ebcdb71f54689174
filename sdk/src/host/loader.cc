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

#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/result_name.hpp"

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

// "MAJOR.MINOR" or "MAJOR.MINOR.PATCH", digits only; *patch = -1 when absent.
bool parseNcclVersion(const std::string& text, int* major, int* minor, int* patch) {
  if (text.empty() || text.back() == '.' || text.size() > 16) return false;
  std::vector<int> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, '.')) {
    if (part.empty() || part.size() > 4 ||
        part.find_first_not_of("0123456789") != std::string::npos)
      return false;
    parts.push_back(std::stoi(part));
  }
  if (parts.size() < 2 || parts.size() > 3) return false;
  *major = parts[0];
  *minor = parts[1];
  *patch = parts.size() == 3 ? parts[2] : -1;
  return true;
}

bool isLibName(const std::string& name) {
  return name.compare(0, 3, "lib") == 0 && endsWith(name, ".so");
}

}  // namespace

std::string NcclRelease::text() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

const std::vector<NcclRelease>& knownNcclReleases() {
  // git tag -l 'v2.*' in NVIDIA/nccl, from the first release with v7.
  static const std::vector<NcclRelease> kReleases = {
      {2, 19, 1}, {2, 19, 3}, {2, 19, 4}, {2, 20, 3}, {2, 20, 5}, {2, 21, 5}, {2, 22, 3},
      {2, 23, 4}, {2, 24, 3}, {2, 25, 1}, {2, 26, 2}, {2, 26, 3}, {2, 26, 5}, {2, 26, 6},
      {2, 27, 3}, {2, 27, 5}, {2, 27, 6}, {2, 27, 7}, {2, 28, 3}, {2, 28, 7}, {2, 28, 9},
      {2, 29, 2}, {2, 29, 3}, {2, 29, 7}, {2, 30, 3}, {2, 30, 4}, {2, 30, 7},
  };
  return kReleases;
}

std::string knownNcclReleasesText() {
  std::string text;
  const std::vector<NcclRelease>& all = knownNcclReleases();
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    std::string patches;
    for (; j < all.size() && all[j].minor == all[i].minor; j++) {
      patches += (j == i ? "" : ",") + std::to_string(all[j].patch);
    }
    bool several = j - i > 1;
    text += (text.empty() ? "" : ", ") + std::to_string(all[i].major) + "." +
            std::to_string(all[i].minor) + "." + (several ? "{" + patches + "}" : patches);
    i = j;
  }
  return text;
}

std::optional<NcclRelease> findNcclRelease(const std::string& text) {
  int major = 0, minor = 0, patch = 0;
  if (!parseNcclVersion(text, &major, &minor, &patch)) return std::nullopt;
  std::optional<NcclRelease> found;
  for (const NcclRelease& r : knownNcclReleases()) {
    if (r.major != major || r.minor != minor) continue;
    if (patch < 0 || r.patch == patch) found = r;  // the list is sorted: the last is the newest
  }
  return found;
}

NcclBehaviour behaviourOf(const NcclRelease& r) {
  NcclBehaviour b;
  b.release = r;
  b.newestVersion = detail::newestAbiOfNccl(r.minor);
  auto atLeast = [&](int minor, int patch) {
    return r.minor > minor || (r.minor == minor && r.patch >= patch);
  };
  PluginNameRules& n = b.nameRules;
  n.splitsList = atLeast(27, 3);
  n.noneDisables = atLeast(28, 3);
  n.staticPlugin = atLeast(26, 0);
  n.emptyIsUnset = !n.splitsList;
  using Files = PluginNameRules::Files;
  n.files = !atLeast(21, 0)   ? Files::SuffixedOnly
            : !atLeast(27, 3) ? Files::AsGivenThenSuffixed
            : !atLeast(27, 5) ? Files::LibNameElseSuffixed
                              : Files::AsGivenThenSuffixedIfBare;
  return b;
}

bool abiWindowForNccl(const std::string& text, int* oldest, int* newest) {
  std::optional<NcclRelease> release = findNcclRelease(text);
  if (!release) return false;
  NcclBehaviour b = behaviourOf(*release);
  *oldest = b.oldestVersion;
  *newest = b.newestVersion;
  return true;
}

LoadedPlugin::LoadedPlugin(void* library, std::string path, std::vector<int> exported,
                           std::unique_ptr<NetView> view)
    : library_(library),
      path_(std::move(path)),
      exported_(std::move(exported)),
      view_(std::move(view)) {}

LoadedPlugin::~LoadedPlugin() {
  view_.reset();
  if (library_ != nullptr) dlclose(library_);
}

void* LoadedPlugin::symbol(const char* name) const {
  return library_ != nullptr ? dlsym(library_, name) : nullptr;
}

std::unique_ptr<OpenedLibrary> OpenedLibrary::open(const std::string& file, std::string* error) {
  void* handle = dlopen(file.empty() ? nullptr : file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* text = dlerror();
    *error = text ? text : "unknown dlopen error";
    return nullptr;
  }
  return std::unique_ptr<OpenedLibrary>(new OpenedLibrary(handle));
}

OpenedLibrary::~OpenedLibrary() {
  dlclose(handle_);
}

void* OpenedLibrary::symbol(const char* name) const {
  return dlsym(handle_, name);
}

Loader::Loader(LoaderOptions options) : options_(std::move(options)) {}

std::vector<std::string> Loader::entriesFor(const std::optional<std::string>& pluginList,
                                            const PluginNameRules& rules) {
  if (!pluginList.has_value() || (rules.emptyIsUnset && pluginList->empty()))
    return {"libnccl-net.so"};
  if (rules.noneDisables && strcasecmp(pluginList->c_str(), "none") == 0) return {};
  if (!rules.splitsList) return {*pluginList};
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

std::vector<std::string> Loader::filesForEntry(const std::string& entry,
                                               const PluginNameRules& rules) {
  if (rules.staticPlugin && namesStaticPlugin(entry)) return {""};
  std::string suffixed = "libnccl-net-" + entry + ".so";
  switch (rules.files) {
    case PluginNameRules::Files::SuffixedOnly: return {suffixed};
    case PluginNameRules::Files::AsGivenThenSuffixed: return {entry, suffixed};
    case PluginNameRules::Files::LibNameElseSuffixed:
      // NCCL 2.27.3 also wanted at least "libX.so" (7 characters).
      if (entry.size() >= 7 && isLibName(entry)) return {entry};
      return {suffixed};
    case PluginNameRules::Files::AsGivenThenSuffixedIfBare: break;
  }
  if (entry.find('/') != std::string::npos || isLibName(entry)) return {entry};
  return {entry, suffixed};
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
  report_.entries = entriesFor(pluginList, options_.nameRules);
  report_.nameRules = !options_.nameRules.splitsList    ? "one name, commas included"
                      : options_.nameRules.noneDisables ? "comma-separated list"
                                                        : "comma-separated list, 'none' is a name";

  NCCLNET_INFO(options_.logger, NCCL_INIT, "NCCL_NET_PLUGIN=%s (%s), accepting %s",
               report_.pluginList.c_str(), report_.pluginListSource.c_str(),
               describeVersions(report_.oldestVersion, report_.newestVersion).c_str());
  if (report_.entries.empty()) {
    report_.outcome = pluginList.value_or("").empty()
                          ? "NCCL_NET_PLUGIN is empty: no external plugin is loaded"
                          : "NCCL_NET_PLUGIN=" + *pluginList + ": no external plugin is loaded";
    return ncclSystemError;
  }
  // Unset, NCCL tries libnccl-net.so alone, whatever its rules for names.
  bool unset = !pluginList || (options_.nameRules.emptyIsUnset && pluginList->empty());
  for (const std::string& entry : report_.entries) {
    std::vector<std::string> files =
        unset ? std::vector<std::string>{entry} : filesForEntry(entry, options_.nameRules);
    for (const std::string& file : files) {
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
    return unusable(
        exported.empty()
            ? "exports no ncclNetPlugin_v6..v12 symbol (External network plugin is unsupported)"
            : "exports no version in the accepted window " +
                  describeVersions(report_.oldestVersion, report_.newestVersion));
  }
  std::unique_ptr<NetView> view = makeNetView(attempt.version, chosen, options_.logger);
  const char* name = view->name();
  if (name == nullptr)
    return unusable("ncclNetPlugin_v" + std::to_string(attempt.version) + " has a NULL name");
  attempt.tableName = name;
  if (!report_.netName.empty() && strcasecmp(report_.netName.c_str(), name) != 0) {
    return unusable("table name '" + attempt.tableName +
                    "' does not match NCCL_NET=" + report_.netName);
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
    attempt.verdict = "init failed with " + resultText(res) + " (Failed to initialize NET plugin)";
    return false;
  }
  int ndev = 0;
  res = net.devices(&ndev);
  attempt.devices = res == ncclSuccess ? ndev : -1;
  bool ok = true;
  if (res != ncclSuccess || ndev <= 0) {
    attempt.verdict = res != ncclSuccess ? "devices() failed with " + resultText(res)
                                         : "devices() reported 0 devices";
    ok = false;
  } else {
    ncclNetProperties_v12_t props;
    res = net.getProperties(0, &props);
    if (res != ncclSuccess) {
      attempt.verdict = "getProperties(0) failed with " + resultText(res);
      ok = false;
    } else if (props.netDeviceType == NCCL_NET_DEVICE_UNPACK &&
               props.netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION) {
      attempt.verdict = "device 0 is UNPACK version " + std::to_string(props.netDeviceVersion) +
                        ", NCCL accepts only version " +
                        std::to_string(NCCL_NET_DEVICE_UNPACK_VERSION);
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
