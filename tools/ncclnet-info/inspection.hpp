// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: everything the tool learns about one plugin resolution, as
// plain data. inspect() gathers it; the text and JSON reports only print it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "device_properties.hpp"
#include "ncclnet/abi/net.h"
#include "ncclnet/host/extra_tables.hpp"
#include "ncclnet/host/loader.hpp"
#include "ncclnet/host/log_capture.hpp"
#include "ncclnet/host/property_checks.hpp"
#include "options.hpp"
#include "verdicts.hpp"

namespace ncclnet::info {

using host::logLevelName;
using host::LogLine;

// One device's properties, as NCCL's core sees them (the v12 view). The
// char* members of `props` are not used after inspection: the library may
// be gone; `name` and `pciPath` hold copies (nullopt = the plugin gave NULL).
// tools/json owns the type: the suite's report writes devices the same way.
using DeviceInfo = json::DeviceProperties;

// An optional table member, as the loaded ABI version has it.
enum class SlotState { Provided, Null, NotInVersion };
struct OptionalSlot {
  const char* name;
  int since;  // first ABI version with the slot
  SlotState state;
};

struct PluginInfo {
  std::string name;
  std::string path;
  int version = 0;
  std::vector<int> exported;  // newest first
  std::vector<OptionalSlot> optional;
  ncclResult_t initResult = ncclSuccess;
  ncclResult_t devicesResult = ncclSuccess;
  ncclResult_t finalizeResult = ncclSuccess;
  int deviceCount = 0;
  std::vector<DeviceInfo> devices;
};

// The GIN, RMA and CollNet tables of the plugin's library (the one
// selected, else the last one opened) and what NCCL would take from them:
// for the --nccl release, else for host::extraTableReleases().
struct ReleaseTables {
  std::string release;  // "2.30.7"
  std::vector<host::TableChoice> tables;
};
struct OtherTables {
  std::string library;  // "" when no library opened
  std::string error;    // why it did not open again, when it did not
  std::vector<host::ExportedTable> exported;
  std::vector<ReleaseTables> releases;
};

struct Warning {
  int device;  // -1: about the plugin as a whole
  std::string field;
  std::string message;
};

// One knob an SDK-built plugin reported ("param NAME=VALUE (default D, from S): HELP").
struct Param {
  std::string name;
  std::string value;
  std::string defaultValue;
  std::string source;  // "env", "default", or "refused" (set to a value the knob does not allow)
  std::string help;
};

struct Inspection {
  Options options;
  host::LoadReport report;
  bool loaded = false;
  PluginInfo plugin;               // valid when loaded
  std::vector<Warning> warnings;   // suspicious properties
  std::vector<LogLine> pluginLog;  // what the plugin logged (the Loader's own lines removed)
  std::vector<Param> params;
  std::string paramsLibrary;  // the file whose published table gave params; "" = init's log lines
  std::string paramsError;    // why that file's table could not be read
  std::vector<std::string> envLines;     // NCCL_ENV lines that are not "param" lines
  bool pluginInitialized = false;        // some init ran, so an SDK plugin had its chance to
                                         // report its knobs
  std::vector<ReleaseVerdict> verdicts;  // one per NCCL release judged
  OtherTables otherTables;
  int exitCode = kExitNothingLoadable;
};

Inspection inspect(const Options& options);

// The first ABI version whose properties carry a field: the SDK's rule.
using host::propertySince;

}  // namespace ncclnet::info
