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

// The row of rule `id`: its name is the enumerator's, spelled once, so the
// two cannot drift apart (docs/contract.md's headings are checked against
// the names by conformance_docs_match_the_catalogue).
#define RULE(id, severity, title) \
  { Rule::id, #id, severity, title }

const std::vector<RuleInfo>& allRules() {
  static const std::vector<RuleInfo> rules = {
      RULE(ProfileExpectation, MUST, "expectation of the profile"),
      RULE(TablesExported, MUST, "ncclNetPlugin_vN tables are exported and load with RTLD_NOW"),
      RULE(NameSetAndConsistent, MUST,
           "the table name is set, usable by NCCL_NET, and the same in every table"),
      RULE(InitPerCommunicator, MUST,
           "init/finalize pair per communicator, repeatable while others live, one context each"),
      RULE(DevicesReported, MUST,
           "devices() reports at least one device, the same count every time"),
      RULE(PhandlesMayBeNull, MUST, "phandles may be NULL"),
      RULE(PciPathValid, SHOULD, "pciPath resolves under /sys or is NULL"),
      RULE(NamesUnique, SHOULD, "device names are unique"),
      RULE(PtrSupportCoherent, SHOULD, "ptrSupport is coherent with regMrDmaBuf"),
      RULE(GlobalRegistrationCheap, SHOULD,
           "regIsGlobal promises cheap re-registration of sub-ranges"),
      RULE(ForceFlushHonoured, MUST,
           "forceFlush: a plugin that asks NCCL to flush GPU receives flushes them"),
      RULE(SpeedPositive, SHOULD, "speed is in Mbps and positive"),
      RULE(LatencyValid, MUST,
           "latency is in microseconds, finite and above -4 (where NCCL's tuner starts to fail)"),
      RULE(MaxCommsPositive, MUST,
           "the connections NCCL opens can be open at once; maxComms >= 1 through a v6 table"),
      RULE(MaxRecvsInRange, SHOULD, "maxRecvs is in 1..8"),
      RULE(DeviceTypeKnown, MUST, "netDeviceType is HOST, or UNPACK at netDeviceVersion 7"),
      RULE(MaxBytesInRange, MUST, "maxP2pBytes is in (0, 1 TiB]"),
      RULE(VirtualDevicesValid, MUST,
           "vProps.ndevs is not above the ABI's NCCL_NET_MAX_DEVS_PER_NIC, which NCCL's version "
           "shims copy"),
      RULE(NewerFieldsValid, SHOULD,
           "maxMultiRequestSize >= 1, railId/planeId UNDEF or valid, the net table's "
           "maxCollBytes in (0, 1 TiB]"),
      RULE(ListenNeverBlocks, MUST,
           "listen returns without waiting for a peer; a listen may be closed without any accept"),
      RULE(ConnectAcceptNeverBlock, MUST,
           "connect and accept return without waiting for the peer and are retried with the same "
           "handle"),
      RULE(DevCommMayBeNull, MUST, "sendDevComm/recvDevComm may be NULL"),
      RULE(TrafficClassAccepted, MUST, "the traffic class of a context is accepted"),
      RULE(RegMrHostAndCuda, MUST,
           "regMr registers host memory, and CUDA memory if advertised, on either comm"),
      RULE(RegMrDmaBuf, MUST,
           "regMrDmaBuf registers a dma-buf range; the fd may be closed right after the call"),
      RULE(DeregMrReleases, MUST, "deregMr releases every handle, before the comm is closed"),
      RULE(InFlightLimits, MUST,
           "a comm takes as many requests as NCCL keeps in flight on it: 8 per connection"),
      RULE(
          NullRequestRetry, MUST,
          "a request the plugin cannot take yet is NULL in *request (try again), never an error or "
          "a stale value"),
      RULE(TagRouting, MUST,
           "tags route a send into a buffer of the oldest grouped receive, in posting order"),
      RULE(GroupedCompletion, MUST,
           "the n buffers of a grouped receive complete together with their own sizes"),
      RULE(TruncationIsAnError, MUST,
           "a receive may be larger than the send; a larger send never writes past the receive "
           "buffer, nor leaves it pending"),
      RULE(ZeroByteMessages, MUST, "zero-byte messages complete"),
      RULE(OptionalCompletionTestable, MUST,
           "a receive posted with the optional-completion hint is still testable"),
      RULE(CompletionReportsSizes, MUST,
           "test() reports done with the received sizes, and every byte arrives intact"),
      RULE(FlushMakesVisible, MUST,
           "iflush returns NULL or a completable request; after it, GPU receives are visible"),
      RULE(IrecvConsumedAccepted, MUST, "irecvConsumed is accepted once per completed receive"),
      RULE(SendsOutliveClose, MUST,
           "a send reported done reaches its receive even when the sender closes its comm "
           "first"),
      RULE(ThreadSafe, MUST, "calls may come from several threads at once"),
      RULE(ProfilerEventsWellFormed, MUST,
           "events given to NCCL's profiler callback have a known type and the handles NCCL reads"),
      RULE(ReinitAfterLastFinalize, MUST,
           "init works again on the same load once every context was finalized"),
      RULE(ReloadAfterUnload, MUST, "init works after the library was closed and opened again"),
      RULE(PhysicalDeviceListsItself, SHOULD,
           "vProps of a device lists 1 to the ABI's width of existing devices; a physical one "
           "itself"),
      RULE(ReadmeRequestLimits, SHOULD,
           "a comm takes the README's 32 requests (32 x maxRecvs isends) and beyond what it "
           "takes answers NULL, never an error or a stale value"),
      RULE(FlushOfHostMemory, SHOULD,
           "iflush after a receive into host memory returns NULL or a request that completes"),
      RULE(TruncationReported, SHOULD,
           "a send larger than its receive fails, rather than completing truncated"),
      RULE(CallsReturnPromptly, SHOULD,
           "listen, connect, accept, deregMr and the closes each return within a second"),
      RULE(PropertiesPlausible, SHOULD,
           "latency is not negative and maxComms is at least 1, values NCCL tolerates"),
      RULE(PeerDeathSurfaces, SHOULD,
           "a dead peer surfaces as an error within a bounded time, never as a hang"),
      RULE(CloseWithRequestsInFlight, MUST,
           "comms deregister and close, without hanging or crashing, with requests in flight"),
      RULE(NoLeaks, SHOULD, "create/destroy cycles return every descriptor"),
      RULE(GarbageHandlesRejected, SHOULD,
           "a connect handle no listen produced is refused without a crash"),
      RULE(BadMhandlesRejected, SHOULD,
           "an mhandle regMr never returned is refused without a crash"),
      RULE(StrayConnectionsIgnored, MUST,
           "a connection to the listen endpoint that closes at once or sends what is not a hello "
           "neither fails accept nor keeps the real peer out"),
      RULE(FailedConnectIsolated, SHOULD,
           "a connect that cannot succeed harms only its own comm: later connects still work"),
      RULE(SilentStraysTolerated, SHOULD,
           "a stray that stays silent, stops halfway through a hello or replays one keeps no real "
           "peer out"),
      RULE(NcclJobsSucceed, MUST,
           "real NCCL jobs over the plugin end with exact results, every channel through it, in "
           "bounded time"),
  };
  return rules;
}

#undef RULE

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
