// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host side): finds and loads a net plugin exactly the way
// NCCL does, and records every step so that tools can explain the outcome.
//
//   NCCL_NET_PLUGIN unset        -> libnccl-net.so
//   NCCL_NET_PLUGIN=none         -> no external plugin
//   NCCL_NET_PLUGIN=a,b,...      -> each entry in order (at most 14), each tried
//                                   as given, then as libnccl-net-<entry>.so
//                                   (unless it holds a '/' or is lib*.so)
//   dlopen(RTLD_NOW | RTLD_LOCAL); symbols ncclNetPlugin_v12 ... _v6 probed
//   newest first within the window of the NCCL being emulated;
//   NCCL_NET=<name> keeps only a table whose name matches (case-insensitive);
//   then, as NCCL assigns a plugin: init succeeds, devices() >= 1, and
//   device 0 is HOST or UNPACK version 7.
// That is NCCL 2.28.3 and newer; older releases read NCCL_NET_PLUGIN
// differently (PluginNameRules), and behaviourOf() describes each one:
//
//   std::optional<NcclRelease> r = findNcclRelease("2.23");   // 2.23.4
//   NcclBehaviour b = behaviourOf(*r);
//   LoaderOptions o;
//   o.oldestVersion = b.oldestVersion; o.newestVersion = b.newestVersion;
//   o.nameRules = b.nameRules;
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ncclnet/abi/net.h"
#include "ncclnet/host/callbacks.hpp"
#include "ncclnet/host/net_view.hpp"
#include "ncclnet/log.hpp"

namespace ncclnet::host {

// An NCCL release, e.g. 2.23.4.
struct NcclRelease {
  int major = 0;
  int minor = 0;
  int patch = 0;
  std::string text() const;  // "2.23.4"
};

// Every NCCL release this SDK can emulate (the tags v2.19.1-1 ... v2.30.7-1
// of NVIDIA/nccl), oldest first. A release that is not here is refused
// rather than guessed: its loader may differ from both neighbours.
const std::vector<NcclRelease>& knownNcclReleases();
// The known releases, compact: "2.19.{1,3,4}, 2.20.{3,5}, 2.21.5, ...".
std::string knownNcclReleasesText();
// "MAJOR.MINOR" (the newest known patch of that line) or
// "MAJOR.MINOR.PATCH" (exactly that release); nullopt when not known.
std::optional<NcclRelease> findNcclRelease(const std::string& text);

// How a release turns NCCL_NET_PLUGIN into dlopen() names. NCCL's sources:
// ncclNetPluginInit (src/net.cc, 2.19..2.20), openNetPluginLib (src/net.cc,
// 2.21..2.25), openPluginLib (src/plugin/plugin_open.cc, 2.26+) and
// initPluginLibsOnceFunc (src/plugin/net.cc, 2.27.3+). The defaults are the
// newest rules.
struct PluginNameRules {
  // 2.27.3+: a comma-separated list, at most 14 entries. Before: the whole
  // value is one name, commas included.
  bool splitsList = true;
  // 2.28.3+: "none" disables external plugins. Before: an ordinary name
  // (no such library exists, so NCCL falls back to IB/Socket).
  bool noneDisables = true;
  // 2.26+: a prefix of STATIC_PLUGIN names the program itself.
  bool staticPlugin = true;
  enum class Files {
    SuffixedOnly,              // 2.19..2.20: only "libnccl-net-X.so"
    AsGivenThenSuffixed,       // 2.21..2.26: "X", then "libnccl-net-X.so", always both
    LibNameElseSuffixed,       // 2.27.3: "X" if it is lib*.so, else only "libnccl-net-X.so"
    AsGivenThenSuffixedIfBare  // 2.27.5+: "X", then the suffixed name unless X holds a
                               // '/' or is lib*.so
  };
  Files files = Files::AsGivenThenSuffixedIfBare;
  // An empty NCCL_NET_PLUGIN is unset (<2.27) rather than an empty list.
  bool emptyIsUnset = false;
};

// What a release does with a net plugin.
struct NcclBehaviour {
  NcclRelease release;
  int oldestVersion = 6;  // the oldest this SDK knows (2.19..2.25 also take v5)
  int newestVersion = 0;  // 2.19 v7, 2.20..2.23 v8, 2.24..2.25 v9, 2.26..2.27 v10,
                          // 2.28..2.29 v11, 2.30 v12
  PluginNameRules nameRules;
};
NcclBehaviour behaviourOf(const NcclRelease& release);

// The net ABI window of a known NCCL release (findNcclRelease); false for
// anything else.
bool abiWindowForNccl(const std::string& ncclVersion, int* oldest, int* newest);

struct LoaderOptions {
  std::optional<std::string> pluginList;  // NCCL_NET_PLUGIN; nullopt: read the environment
  std::optional<std::string> netName;     // NCCL_NET; nullopt: read the environment
  int oldestVersion = NCCLNET_ABI_OLDEST;
  int newestVersion = NCCLNET_ABI_NEWEST;
  int pinnedVersion = 0;      // nonzero: accept exactly this version
  bool checkInit = true;      // do NCCL's assignment checks (init, devices, device type)
  PluginNameRules nameRules;  // how NCCL_NET_PLUGIN is read; default: NCCL 2.28.3+
  // Where resolution steps are logged (INFO, NCCL_INIT); its function is
  // also what the assignment check's init hands the plugin, as NCCL hands
  // it ncclDebugLog (never NULL: stderrLogger() by default).
  Logger logger{stderrLogger(), "NET/Plugin"};
};

struct SymbolProbe {
  int version = 0;
  bool found = false;
};

// One dlopen attempt and what followed.
struct LibraryAttempt {
  std::string entry;  // the NCCL_NET_PLUGIN entry it came from
  std::string file;   // what dlopen was given ("" = the program itself)
  bool opened = false;
  std::string error;                 // dlerror() when it did not open
  std::string path;                  // the resolved path when it did
  std::vector<SymbolProbe> symbols;  // ncclNetPlugin_v12 ... _v6
  int version = 0;                   // version chosen within the window; 0 = none
  std::string tableName;
  int devices = -1;  // devices() when checkInit ran
  bool selected = false;
  std::string verdict;  // one line: why it was chosen or passed over
};

struct LoadReport {
  std::string pluginList;        // the value used, or "(unset)"
  std::string pluginListSource;  // "environment", "option" or "default"
  std::string nameRules;         // how the value was read, e.g. "one name, commas included"
  std::string netName;           // "" when NCCL_NET is unset
  int oldestVersion = 0;
  int newestVersion = 0;
  std::vector<std::string> entries;
  std::vector<LibraryAttempt> attempts;
  std::string outcome;  // one line
};

// A loaded plugin: the library stays open as long as this object lives.
class LoadedPlugin {
 public:
  ~LoadedPlugin();
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;

  NetView& net() { return *view_; }
  int version() const { return view_->version(); }
  const char* name() const { return view_->name(); }
  const std::string& path() const { return path_; }
  // Every ncclNetPlugin_vN (6..12) the library exports, newest first.
  const std::vector<int>& exportedVersions() const { return exported_; }
  // Another symbol of the same library (a GIN, RMA or CollNet table), or
  // nullptr where the library has none.
  void* symbol(const char* name) const;

 private:
  friend class Loader;
  LoadedPlugin(void* library, std::string path, std::vector<int> exported,
               std::unique_ptr<NetView> view);
  void* library_;
  std::string path_;
  std::vector<int> exported_;
  std::unique_ptr<NetView> view_;
};

// A library opened as NCCL opens a plugin (dlopen RTLD_NOW | RTLD_LOCAL),
// only to look its symbols up; closed again when this object goes.
class OpenedLibrary {
 public:
  // `file` "" is the program itself. nullptr, with dlerror() in *error,
  // when it does not open.
  static std::unique_ptr<OpenedLibrary> open(const std::string& file, std::string* error);
  ~OpenedLibrary();
  OpenedLibrary(const OpenedLibrary&) = delete;
  OpenedLibrary& operator=(const OpenedLibrary&) = delete;

  // nullptr where the library has no such symbol.
  void* symbol(const char* name) const;

 private:
  explicit OpenedLibrary(void* handle) : handle_(handle) {}
  void* handle_;
};

class Loader {
 public:
  explicit Loader(LoaderOptions options);

  // Loads the plugin NCCL would use. ncclSuccess with *out set, or an error
  // (ncclSystemError: no external plugin, NCCL would use its internal IB or
  // Socket; ncclInvalidUsage: NCCL_NET names a plugin that neither the
  // libraries nor NCCL's internal transports provide) with the reason in
  // report().
  ncclResult_t load(std::unique_ptr<LoadedPlugin>* out);
  const LoadReport& report() const { return report_; }

  // The dlopen names NCCL tries for one NCCL_NET_PLUGIN entry, in order.
  static std::vector<std::string> filesForEntry(const std::string& entry,
                                                const PluginNameRules& rules = {});
  // The entries of an NCCL_NET_PLUGIN value (unset: libnccl-net.so; none: {}).
  static std::vector<std::string> entriesFor(const std::optional<std::string>& pluginList,
                                             const PluginNameRules& rules = {});

 private:
  bool tryFile(const std::string& entry, const std::string& file,
               std::unique_ptr<LoadedPlugin>* out);
  bool assignable(NetView& net, LibraryAttempt& attempt);

  LoaderOptions options_;
  LoadReport report_;
};

}  // namespace ncclnet::host
