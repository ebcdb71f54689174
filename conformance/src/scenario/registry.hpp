// SPDX-License-Identifier: Apache-2.0
// The scenario catalogue. A scenario is one gtest per ABI version; its body
// runs on every rank, each in its own process, and branches on rank().
#pragma once

#include <string>
#include <vector>

#include "scenario/ctx.hpp"
#include "scenario/requirements.hpp"

namespace conformance {

// Declared with designated initializers, field by field:
//
//   out.push_back({.area = "Grouped", .name = "PerBufferSizes",
//                  .rule = Rule::GroupedCompletion, .ranks = 2,
//                  .needs = {.groupedReceives = true}, .run = perBufferSizes,
//                  .summary = "..."});
//
// They are C++20, taken by GCC and clang in C++17 as an extension without a
// warning unless -Wpedantic is on (it is not; the reference transport's
// RoundOptions is written the same way). The fields must come in the order
// they are declared here; one left out keeps its default (every field has
// an initializer of its own: GCC 12's -Wmissing-field-initializers warns
// about a field left out that has none).
// The ranks of Replay.Recorded: one per trace file of --replay DIR.
constexpr int kRanksOfTheTrace = 0;
constexpr const char* kRecordedReplay = "Replay.Recorded";

struct Scenario {
  const char* area = "";                 // gtest suite: Load, Properties, Init, Connect, ...
  const char* name = "";                 // gtest name: the behaviour, in CamelCase
  Rule rule = Rule::ProfileExpectation;  // the rule it checks (crashes and deadlines name it)
  int ranks = 2;                         // processes it needs (kRanksOfTheTrace: see there)
  // Judged before its ranks start: an unmet one makes the test NotRun.
  // (Not `requires`, a keyword from C++20 on.)
  Requirements needs = {};
  void (*run)(Ctx&) = nullptr;
  const char* summary = "";  // one line, for --list and the docs
  // Each rank runs in a process image of its own (fork, then exec), not a
  // fork of the coordinator, which keeps the plugin's dependencies loaded.
  bool freshProcess = false;
  // The least deadline it gets, before the time scale: a profile's
  // deadline may lengthen it, never shorten it (real NCCL jobs take longer
  // than any profile's default).
  double minDeadlineSec = 0;

  std::string fullName() const { return std::string(area) + "." + name; }
};

// Every scenario, grouped by area, in the order they run.
const std::vector<Scenario>& catalogue();
const Scenario* findScenario(const std::string& fullName);

// One per area file (scenarios/<area>.cc).
void addLoadScenarios(std::vector<Scenario>& out);
void addPropertiesScenarios(std::vector<Scenario>& out);
void addInitScenarios(std::vector<Scenario>& out);
void addConnectScenarios(std::vector<Scenario>& out);
void addRegistrationScenarios(std::vector<Scenario>& out);
void addDataScenarios(std::vector<Scenario>& out);
void addGpuMemoryScenarios(std::vector<Scenario>& out);
void addGroupedScenarios(std::vector<Scenario>& out);
void addFlowScenarios(std::vector<Scenario>& out);
void addThreadScenarios(std::vector<Scenario>& out);
void addCompletionScenarios(std::vector<Scenario>& out);
void addTransportScenarios(std::vector<Scenario>& out);
void addCloseScenarios(std::vector<Scenario>& out);
void addFaultScenarios(std::vector<Scenario>& out);
void addReplayScenarios(std::vector<Scenario>& out);
void addNcclScenarios(std::vector<Scenario>& out);
void addRmaScenarios(std::vector<Scenario>& out);
void addRmaCudaScenarios(std::vector<Scenario>& out);
void addRmaLifecycleScenarios(std::vector<Scenario>& out);
void addCollNetScenarios(std::vector<Scenario>& out);

}  // namespace conformance
