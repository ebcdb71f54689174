// SPDX-License-Identifier: Apache-2.0
// The bridge to GoogleTest: one test per scenario and ABI version, named
// v<N>/<Area>.<Scenario>, whose body runs the scenario through the
// coordinator and turns its outcome into a gtest result and a report entry.
#pragma once

#include <string>
#include <vector>

#include "harness/coordinator.hpp"
#include "harness/worker.hpp"
#include "options.hpp"
#include "report/report.hpp"

namespace conformance {

struct Suite {
  Coordinator* coordinator;
  const RunConfig* config;
  Report* report;
  Options run;  // this run's options, from which each test's rerun command is made
};

// Registers the tests the profile includes. Returns how many.
int registerSuite(Suite* suite, const std::vector<int>& versions);

}  // namespace conformance
