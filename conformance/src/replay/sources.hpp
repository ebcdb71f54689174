// SPDX-License-Identifier: Apache-2.0
// Where replayed traces come from: a directory the operator recorded
// (--replay DIR), or the traces the suite ships, compiled in from
// conformance/traces/<name>/ (one file per process; rank = name order).
//
//   Plan plan;
//   if (!planFromDirectory("/scratch/trace", &plan, &error)) ...  // one line
//   if (!planFromShipped("ring-simple", &plan, &error)) ...
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "replay/plan.hpp"

namespace conformance::replay {

struct ShippedTrace {
  const char* name;                                        // its directory
  std::vector<std::pair<const char*, const char*>> files;  // file name, text; in rank order
};

// Generated from conformance/traces/ at build time (embed_traces.cmake).
const std::vector<ShippedTrace>& shippedTraces();

// Every *.trace file of `dir`, in name order.
bool planFromDirectory(const std::string& dir, Plan* out, std::string* error);
bool planFromShipped(const std::string& name, Plan* out, std::string* error);

}  // namespace conformance::replay
