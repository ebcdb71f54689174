// SPDX-License-Identifier: Apache-2.0
// The Faults area, one file per concern: bad handles (faults.cc), peer
// death (peer_death.cc), stray connections (strays.cc) and connects that
// cannot succeed (failed_connect.cc).
#pragma once

#include <vector>

#include "scenario/registry.hpp"

namespace conformance {

void addPeerDeathScenarios(std::vector<Scenario>& out);
void addStrayScenarios(std::vector<Scenario>& out);
void addFailedConnectScenarios(std::vector<Scenario>& out);

// Kills this rank (SIGKILL) after telling the coordinator it is on purpose.
[[noreturn]] void dieOnPurpose(Ctx& c);

// How long a plugin may take to notice a dead peer (the profile's
// peerDeathLimit, scaled).
double deathLimit(const Ctx& c);

}  // namespace conformance
