// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: one verdict per NCCL release: would that release load the
// plugin, through which table, or fall back to its internal IB/Socket, and why.
#pragma once

#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"
#include "options.hpp"

namespace ncclnet::info {

enum class Outcome {
  Loads,     // an external plugin is assigned
  Internal,  // NCCL uses its own IB, then Socket
  Fails,     // NCCL_NET names nothing NCCL has: "Failed to initialize any NET plugin"
};

struct ReleaseVerdict {
  std::string release;  // "2.23.4"
  Outcome outcome = Outcome::Internal;
  int version = 0;          // the table's ABI version when it loads
  std::string table;        // its name field
  std::string path;         // the library
  std::string reason;       // why, when it does not load
  std::string internal;     // "IB" or "Socket" when NCCL_NET names one of them
  host::LoadReport report;  // every library the release tried, and what became of it
};

// The releases a report judges by default: the newest patch of 2.23, 2.28
// and 2.30, plus the release --nccl names when it is another one.
std::vector<std::string> verdictReleases(const Options& options);

// Resolves the request of `options` (its --plugin and --net; not --abi: a
// verdict is about the release as it ships) as each of `releases`
// (NcclRelease::text()) would. Runs the plugin's init once per release;
// what the plugin logs meanwhile goes to `logger`.
std::vector<ReleaseVerdict> judgeReleases(const Options& options,
                                          const std::vector<std::string>& releases,
                                          ncclDebugLogger_t logger);

// "NCCL 2.23.4  loads 'sdk-socket' through ncclNetPlugin_v8" and the like.
std::string verdictLine(const ReleaseVerdict& verdict);
const char* outcomeName(Outcome outcome);  // "loads", "internal", "fails"

}  // namespace ncclnet::info
