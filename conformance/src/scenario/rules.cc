// SPDX-License-Identifier: Apache-2.0
// The rule table: number, name, severity and title of every rule. The
// reasons (what NCCL does, in which source file and function) are written
// in docs/contract.md; a test keeps the two in step.
#include "scenario/rules.hpp"

#include <cstdio>

namespace conformance {

namespace {
constexpr Severity MUST = Severity::Must;
constexpr Severity SHOULD = Severity::Should;
}  // namespace

const std::vector<RuleInfo>& allRules() {
  static const std::vector<RuleInfo> rules = {
      {Rule::ProfileExpectation, "ProfileExpectation", MUST, "expectation of the profile"},
      {Rule::TablesExported, "TablesExported", MUST,
       "ncclNetPlugin_vN tables are exported and load with RTLD_NOW"},
      {Rule::NameSetAndConsistent, "NameSetAndConsistent", MUST,
       "the table name is set, usable by NCCL_NET, and the same in every table"},
      {Rule::InitPerCommunicator, "InitPerCommunicator", MUST,
       "init/finalize pair per communicator, repeatable while others live, one context each"},
      {Rule::DevicesReported, "DevicesReported", MUST,
       "devices() reports at least one device, the same count every time"},
      {Rule::PhandlesMayBeNull, "PhandlesMayBeNull", MUST, "phandles may be NULL"},
      {Rule::PciPathValid, "PciPathValid", SHOULD, "pciPath resolves under /sys or is NULL"},
      {Rule::NamesUnique, "NamesUnique", SHOULD, "device names are unique"},
      {Rule::PtrSupportCoherent, "PtrSupportCoherent", SHOULD,
       "ptrSupport is coherent with regMrDmaBuf"},
      {Rule::GlobalRegistrationCheap, "GlobalRegistrationCheap", SHOULD,
       "regIsGlobal promises cheap re-registration of sub-ranges"},
      {Rule::ForceFlushHonoured, "ForceFlushHonoured", MUST,
       "forceFlush: a plugin that asks NCCL to flush GPU receives flushes them"},
      {Rule::SpeedPositive, "SpeedPositive", SHOULD, "speed is in Mbps and positive"},
      {Rule::LatencyValid, "LatencyValid", MUST,
       "latency is in microseconds, finite and not negative"},
      {Rule::MaxCommsPositive, "MaxCommsPositive", MUST,
       "maxComms connections can be open at once"},
      {Rule::MaxRecvsInRange, "MaxRecvsInRange", SHOULD, "maxRecvs is in 1..8"},
      {Rule::DeviceTypeKnown, "DeviceTypeKnown", MUST,
       "netDeviceType is HOST, or UNPACK at netDeviceVersion 7"},
      {Rule::MaxBytesInRange, "MaxBytesInRange", MUST,
       "maxP2pBytes and maxCollBytes are in (0, 1 TiB]"},
      {Rule::VirtualDevicesValid, "VirtualDevicesValid", MUST,
       "vProps lists valid physical devices, no more than the ABI allows"},
      {Rule::NewerFieldsValid, "NewerFieldsValid", SHOULD,
       "maxMultiRequestSize >= 1 and railId/planeId are UNDEF or valid"},
      {Rule::ListenNeverBlocks, "ListenNeverBlocks", MUST,
       "listen never blocks; a listen may be closed without any accept"},
      {Rule::ConnectAcceptNeverBlock, "ConnectAcceptNeverBlock", MUST,
       "connect and accept never block and are retried with the same handle"},
      {Rule::DevCommMayBeNull, "DevCommMayBeNull", MUST, "sendDevComm/recvDevComm may be NULL"},
      {Rule::TrafficClassAccepted, "TrafficClassAccepted", MUST,
       "the traffic class of a context is accepted"},
      {Rule::RegMrHostAndCuda, "RegMrHostAndCuda", MUST,
       "regMr registers host memory, and CUDA memory if advertised, on either comm"},
      {Rule::RegMrDmaBuf, "RegMrDmaBuf", MUST,
       "regMrDmaBuf registers a dma-buf range; the fd may be closed right after the call"},
      {Rule::DeregMrReleases, "DeregMrReleases", MUST,
       "deregMr releases every handle, before the comm is closed"},
      {Rule::InFlightLimits, "InFlightLimits", MUST,
       "32 requests per comm and 32 x maxRecvs isends can be in flight"},
      {Rule::NullRequestRetry, "NullRequestRetry", MUST,
       "a request the plugin cannot take yet is NULL in *request (try again), never an error or "
       "a stale value"},
      {Rule::TagRouting, "TagRouting", MUST,
       "tags route a send into a buffer of the oldest grouped receive, in posting order"},
      {Rule::GroupedCompletion, "GroupedCompletion", MUST,
       "the n buffers of a grouped receive complete together with their own sizes"},
      {Rule::TruncationIsAnError, "TruncationIsAnError", MUST,
       "a receive may be larger than the send; a larger send is an error, never corruption"},
      {Rule::ZeroByteMessages, "ZeroByteMessages", MUST, "zero-byte messages complete"},
      {Rule::OptionalCompletionTestable, "OptionalCompletionTestable", MUST,
       "a receive posted with the optional-completion hint is still testable"},
      {Rule::CompletionReportsSizes, "CompletionReportsSizes", MUST,
       "test() reports done with the received sizes, and every byte arrives intact"},
      {Rule::FlushMakesVisible, "FlushMakesVisible", MUST,
       "iflush returns NULL or a completable request; after it, GPU receives are visible"},
      {Rule::IrecvConsumedAccepted, "IrecvConsumedAccepted", MUST,
       "irecvConsumed is accepted once per completed receive"},
      {Rule::ThreadSafe, "ThreadSafe", MUST, "calls may come from several threads at once"},
      {Rule::ProfilerEventsWellFormed, "ProfilerEventsWellFormed", MUST,
       "events given to NCCL's profiler callback have a known type and the handles NCCL reads"},
      {Rule::ReinitAfterLastFinalize, "ReinitAfterLastFinalize", MUST,
       "init works again on the same load once every context was finalized"},
      {Rule::ReloadAfterUnload, "ReloadAfterUnload", MUST,
       "init works after the library was closed and opened again"},
      {Rule::PeerDeathSurfaces, "PeerDeathSurfaces", SHOULD,
       "a dead peer surfaces as an error within a bounded time, never as a hang"},
      {Rule::CloseWithRequestsInFlight, "CloseWithRequestsInFlight", MUST,
       "comms close cleanly with requests in flight"},
      {Rule::NoLeaks, "NoLeaks", SHOULD, "create/destroy cycles return every descriptor"},
      {Rule::GarbageHandlesRejected, "GarbageHandlesRejected", SHOULD,
       "a connect handle no listen produced is refused without a crash"},
      {Rule::BadMhandlesRejected, "BadMhandlesRejected", SHOULD,
       "an mhandle regMr never returned is refused without a crash"},
      {Rule::StrayConnectionsIgnored, "StrayConnectionsIgnored", MUST,
       "a connection to the listen endpoint that is not a peer neither fails accept nor keeps "
       "the real peer out"},
      {Rule::FailedConnectIsolated, "FailedConnectIsolated", SHOULD,
       "a connect that cannot succeed harms only its own comm: later connects still work"},
  };
  return rules;
}

const RuleInfo& ruleInfo(Rule rule) {
  for (const RuleInfo& info : allRules()) {
    if (info.rule == rule) return info;
  }
  return allRules().front();  // unreachable: every enumerator has a row (checked by a test)
}

int ruleNumber(Rule rule) {
  return static_cast<int>(rule);
}

const char* severityName(Severity s) {
  return s == Severity::Must ? "MUST" : "SHOULD";
}

bool isShould(Rule rule) {
  return ruleInfo(rule).severity == Severity::Should;
}

std::string ruleLabel(Rule rule) {
  const RuleInfo& info = ruleInfo(rule);
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "rule %d ", ruleNumber(rule));
  return prefix + std::string(info.name) + " (" + info.title + ")";
}

}  // namespace conformance
