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

// The net ABI window of an NCCL release: 2.19 -> v7, 2.20..2.23 -> v8,
// 2.24..2.25 -> v9, 2.26..2.27 -> v10, 2.28..2.29 -> v11, 2.30+ -> v12.
// Returns false for text that is not "MAJOR.MINOR[.PATCH]" or for an NCCL
// older than 2.19 (whose plugins predate the versions this SDK knows).
bool abiWindowForNccl(const std::string& ncclVersion, int* oldest, int* newest);

struct LoaderOptions {
  std::optional<std::string> pluginList;  // NCCL_NET_PLUGIN; nullopt: read the environment
  std::optional<std::string> netName;     // NCCL_NET; nullopt: read the environment
  int oldestVersion = NCCLNET_ABI_OLDEST;
  int newestVersion = NCCLNET_ABI_NEWEST;
  int pinnedVersion = 0;  // nonzero: accept exactly this version
  bool checkInit = true;  // do NCCL's assignment checks (init, devices, device type)
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
  std::string entry;    // the NCCL_NET_PLUGIN entry it came from
  std::string file;     // what dlopen was given ("" = the program itself)
  bool opened = false;
  std::string error;    // dlerror() when it did not open
  std::string path;     // the resolved path when it did
  std::vector<SymbolProbe> symbols;  // ncclNetPlugin_v12 ... _v6
  int version = 0;      // version chosen within the window; 0 = none
  std::string tableName;
  int devices = -1;     // devices() when checkInit ran
  bool selected = false;
  std::string verdict;  // one line: why it was chosen or passed over
};

struct LoadReport {
  std::string pluginList;  // the value used, or "(unset)"
  std::string pluginListSource;  // "environment", "option" or "default"
  std::string netName;     // "" when NCCL_NET is unset
  int oldestVersion = 0;
  int newestVersion = 0;
  std::vector<std::string> entries;
  std::vector<LibraryAttempt> attempts;
  std::string outcome;     // one line
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

 private:
  friend class Loader;
  LoadedPlugin(void* library, std::string path, std::vector<int> exported,
               std::unique_ptr<NetView> view);
  void* library_;
  std::string path_;
  std::vector<int> exported_;
  std::unique_ptr<NetView> view_;
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
  static std::vector<std::string> filesForEntry(const std::string& entry);
  // The entries of an NCCL_NET_PLUGIN value (unset: libnccl-net.so; none: {}).
  static std::vector<std::string> entriesFor(const std::optional<std::string>& pluginList);

 private:
  bool tryFile(const std::string& entry, const std::string& file, std::unique_ptr<LoadedPlugin>* out);
  bool assignable(NetView& net, LibraryAttempt& attempt);

  LoaderOptions options_;
  LoadReport report_;
};

}  // namespace ncclnet::host
