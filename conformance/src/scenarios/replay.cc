// SPDX-License-Identifier: Apache-2.0
// Replay: call patterns recorded by ncclnet-check (NCCLNET_CHECK_TRACE) and
// played again against the plugin under test, every byte checked. The
// shipped traces are NCCL's patterns as the reference transport drives
// them, and as real NCCL jobs made them (conformance/traces/README.md says
// how each was recorded);
// Replay.Recorded is the operator's own (--replay DIR).
#include "replay/player.hpp"
#include "replay/sources.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

void replayShipped(Ctx& c, const char* name) {
  replay::Plan plan;
  std::string error;
  if (!replay::planFromShipped(name, &plan, &error))
    fail(Rule::ProfileExpectation, "%s", error.c_str());
  replay::play(c, plan);
}

void recorded(Ctx& c) {
  replay::Plan plan;
  std::string error;
  if (!replay::planFromDirectory(c.profile().replayDir, &plan, &error))
    fail(Rule::ProfileExpectation, "%s", error.c_str());
  replay::play(c, plan);
}

}  // namespace

void addReplayScenarios(std::vector<Scenario>& out) {
  const char* area = "Replay";
  out.push_back({.area = area,
                 .name = "RingSimple",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = [](Ctx& c) { replayShipped(c, "ring-simple"); },
                 .summary = "recorded SIMPLE ring on 4 channels through the reference transport, "
                            "replayed call by call"});
  out.push_back({.area = area,
                 .name = "RingLL",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = [](Ctx& c) { replayShipped(c, "ring-ll"); },
                 .summary = "recorded LL ring on 2 channels, replayed call by call"});
  out.push_back({.area = area,
                 .name = "RingLL128",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = [](Ctx& c) { replayShipped(c, "ring-ll128"); },
                 .summary = "recorded LL128 ring on 4 channels, replayed call by call"});
  out.push_back(
      {.area = area,
       .name = "P2pSharedBuffers",
       .rule = Rule::CompletionReportsSizes,
       .ranks = 2,
       .run = [](Ctx& c) { replayShipped(c, "p2p-shared"); },
       .summary = "recorded p2p through the shared per-peer pools, replayed call by call"});
  // Recorded inside real NCCL 2.28.9 (nccl-driver, two ranks on one GPU as
  // two hosts, the checker around sdk-socket, 2 channels):
  // scripts/gpu/record_nccl_traces.sh.
  out.push_back({.area = area,
                 .name = "NcclRingSimple",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = [](Ctx& c) { replayShipped(c, "nccl-ring-simple"); },
                 .summary = "a real NCCL 2.28.9 job's calls: all-reduce, SIMPLE, 2 channels, "
                            "8 B to 1 MiB"});
  out.push_back({.area = area,
                 .name = "NcclRingLL",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = [](Ctx& c) { replayShipped(c, "nccl-ring-ll"); },
                 .summary = "a real NCCL 2.28.9 job's calls: all-reduce and all-gather, LL, "
                            "2 channels, 8 B to 64 KiB"});
  out.push_back({.area = area,
                 .name = "NcclP2p",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = [](Ctx& c) { replayShipped(c, "nccl-p2p"); },
                 .summary = "a real NCCL 2.28.9 job's calls: send/recv and all-to-all, "
                            "2 channels, 8 B to 1 MiB"});
  out.push_back({.area = area,
                 .name = "Recorded",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = kRanksOfTheTrace,
                 .run = recorded,
                 .summary = "the traces of --replay DIR (only run with --replay)"});
}

}  // namespace conformance
