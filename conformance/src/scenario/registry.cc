// SPDX-License-Identifier: Apache-2.0
// The catalogue, assembled from the area files in a fixed order.
#include "scenario/registry.hpp"

namespace conformance {

const std::vector<Scenario>& catalogue() {
  static const std::vector<Scenario> all = [] {
    std::vector<Scenario> out;
    addLoadScenarios(out);
    addPropertiesScenarios(out);
    addInitScenarios(out);
    addConnectScenarios(out);
    addRegistrationScenarios(out);
    addDataScenarios(out);
    addGpuMemoryScenarios(out);
    addGroupedScenarios(out);
    addFlowScenarios(out);
    addThreadScenarios(out);
    addCompletionScenarios(out);
    addTransportScenarios(out);
    addCloseScenarios(out);
    addFaultScenarios(out);
    addReplayScenarios(out);
    addNcclScenarios(out);
    addRmaScenarios(out);
    addRmaCudaScenarios(out);
    addRmaLifecycleScenarios(out);
    addCollNetScenarios(out);
    return out;
  }();
  return all;
}

const Scenario* findScenario(const std::string& fullName) {
  for (const Scenario& s : catalogue()) {
    if (s.fullName() == fullName) return &s;
  }
  return nullptr;
}

}  // namespace conformance
