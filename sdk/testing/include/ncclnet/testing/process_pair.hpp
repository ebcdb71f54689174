// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: two sides of a test, each in a forked child of its
// own, joined by a Channel; the test process itself loads nothing, so no
// plugin or provider state ever crosses a fork. A side returns "" when all
// went well, else what failed (the ROLE_* macros of side_check.hpp write
// that string).
//
//   std::string failed = runPair(
//       [](Channel& peer) { ... listen; peer.send(handle ...); accept; receive ...; return ""; },
//       [](Channel& peer) { ... peer.receive(handle ...); connect; send ...; return ""; },
//       30);
//   EXPECT_EQ(failed, "");
#pragma once

#include <functional>
#include <string>

#include "ncclnet/testing/channel.hpp"

namespace ncclnet::testing {

using Side = std::function<std::string(Channel& peer)>;

// Runs `first` and `second` at once (only `second` when `first` is empty),
// each in its own child. "" when both returned "" and exited cleanly; else
// one line per side that failed, named "first"/"second": what it returned,
// the signal that killed it, or that it was still running after `seconds`
// (then killed).
std::string runPair(const Side& first, const Side& second, double seconds = 30);

}  // namespace ncclnet::testing
