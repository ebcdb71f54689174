// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (contract): the rules of the net-plugin contract, each with
// its number, name, severity and a one-line title. The one list both judges
// use: ncclnet-conformance, which checks them scenario by scenario, and
// ncclnet-check, which checks the ones a single call shows. docs/contract.md
// says for each rule what NCCL does that relies on it (a test keeps its
// headings in step with this list).
//
// Severity: a MUST violation breaks, hangs or corrupts an NCCL job and fails
// a conformance run; a SHOULD violation is robustness NCCL itself does not
// exercise, reported as a warning (a failure under --strict).
//
//   for (const RuleInfo& r : allRules()) ...  // in number order
//   ruleTag(Rule::TagRouting)                  // "rule 30 TagRouting"
//   constexpr const RuleInfo& r = ruleInfo(Rule::TagRouting);  // at compile time too
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace ncclnet::contract {

enum class Severity { Must, Should };

// X(number, Name, Must|Should, title) for every rule, in number order. The
// number and name are what reports, CI filters, bug reports and the
// checker's log lines refer to: a rule keeps both for good, and a retired
// number is never reused (docs/contract.md, "How rules are numbered").
// Each rule is spelled once, here: the enumerator, the table and every
// name derive from it.
#define NCCLNET_CONTRACT_RULES(X)                                                                  \
  X(0, ProfileExpectation, Must, "expectation of the profile")                                     \
  X(1, TablesExported, Must, "ncclNetPlugin_vN tables are exported and load with RTLD_NOW")        \
  X(2, NameSetAndConsistent, Must,                                                                 \
    "the table name is set, usable by NCCL_NET, and the same in every table")                      \
  X(3, InitPerCommunicator, Must,                                                                  \
    "init/finalize pair per communicator, repeatable while others live, one context each")         \
  X(4, DevicesReported, Must, "devices() reports at least one device, the same count every time")  \
  X(5, PhandlesMayBeNull, Must, "phandles may be NULL")                                            \
  X(6, PciPathValid, Should, "pciPath resolves under /sys or is NULL")                             \
  X(8, NamesUnique, Should, "device names are unique")                                             \
  X(9, PtrSupportCoherent, Should, "ptrSupport is coherent with regMrDmaBuf")                      \
  X(10, GlobalRegistrationCheap, Should,                                                           \
    "regIsGlobal promises cheap re-registration of sub-ranges")                                    \
  X(11, ForceFlushHonoured, Must,                                                                  \
    "forceFlush: a plugin that asks NCCL to flush GPU receives flushes them")                      \
  X(12, SpeedPositive, Should, "speed is in Mbps and positive")                                    \
  X(14, LatencyValid, Must,                                                                        \
    "latency is in microseconds, finite and above -4 (where NCCL's tuner starts to fail)")         \
  X(15, MaxCommsPositive, Must,                                                                    \
    "the connections NCCL opens can be open at once; maxComms >= 1 through a v6 table")            \
  X(16, MaxRecvsInRange, Should, "maxRecvs is in 1..8")                                            \
  X(17, DeviceTypeKnown, Must, "netDeviceType is HOST, or UNPACK at netDeviceVersion 7")           \
  X(18, MaxBytesInRange, Must, "maxP2pBytes is in (0, 1 TiB]")                                     \
  X(19, VirtualDevicesValid, Must,                                                                 \
    "vProps.ndevs is not above the ABI's NCCL_NET_MAX_DEVS_PER_NIC, which NCCL's version "         \
    "shims copy")                                                                                  \
  X(20, NewerFieldsValid, Should,                                                                  \
    "maxMultiRequestSize >= 1, railId/planeId UNDEF or valid, the net table's "                    \
    "maxCollBytes in (0, 1 TiB]")                                                                  \
  X(21, ListenNeverBlocks, Must,                                                                   \
    "listen returns without waiting for a peer; a listen may be closed without any accept")        \
  X(22, ConnectAcceptNeverBlock, Must,                                                             \
    "connect and accept return without waiting for the peer and are retried with the same "        \
    "handle")                                                                                      \
  X(23, DevCommMayBeNull, Must, "sendDevComm/recvDevComm may be NULL")                             \
  X(24, TrafficClassAccepted, Must, "the traffic class of a context is accepted")                  \
  X(25, RegMrHostAndCuda, Must,                                                                    \
    "regMr registers host memory, and CUDA memory if advertised, on either comm")                  \
  X(26, RegMrDmaBuf, Must,                                                                         \
    "regMrDmaBuf registers a dma-buf range; the fd may be closed right after the call")            \
  X(27, DeregMrReleases, Must, "deregMr releases every handle, before the comm is closed")         \
  X(28, InFlightLimits, Must,                                                                      \
    "a comm takes as many requests as NCCL keeps in flight on it: 8 per connection")               \
  X(29, NullRequestRetry, Must,                                                                    \
    "a request the plugin cannot take yet is NULL in *request (try again), never an error or "     \
    "a stale value")                                                                               \
  X(30, TagRouting, Must,                                                                          \
    "tags route a send into a buffer of the oldest grouped receive, in posting order")             \
  X(31, GroupedCompletion, Must,                                                                   \
    "the n buffers of a grouped receive complete together with their own sizes")                   \
  X(32, TruncationIsAnError, Must,                                                                 \
    "a receive may be larger than the send; a larger send never writes past the receive "          \
    "buffer, nor leaves it pending")                                                               \
  X(33, ZeroByteMessages, Must, "zero-byte messages complete")                                     \
  X(34, OptionalCompletionTestable, Must,                                                          \
    "a receive posted with the optional-completion hint is still testable")                        \
  X(35, CompletionReportsSizes, Must,                                                              \
    "test() reports done with the received sizes, and every byte arrives intact")                  \
  X(36, FlushMakesVisible, Must,                                                                   \
    "iflush returns NULL or a completable request; after it, GPU receives are visible")            \
  X(37, IrecvConsumedAccepted, Must, "irecvConsumed is accepted once per completed receive")       \
  X(38, SendsOutliveClose, Must,                                                                   \
    "a send reported done reaches its receive even when the sender closes its comm first")         \
  X(40, ThreadSafe, Must, "calls may come from several threads at once")                           \
  X(41, ProfilerEventsWellFormed, Must,                                                            \
    "events given to NCCL's profiler callback have a known type and the handles NCCL reads")       \
  X(42, ReinitAfterLastFinalize, Must,                                                             \
    "init works again on the same load once every context was finalized")                          \
  X(43, ReloadAfterUnload, Must, "init works after the library was closed and opened again")       \
  X(44, PhysicalDeviceListsItself, Should,                                                         \
    "vProps of a device lists 1 to the ABI's width of existing devices; a physical one itself")    \
  X(45, ReadmeRequestLimits, Should,                                                               \
    "a comm takes the README's 32 requests (32 x maxRecvs isends) and beyond what it takes "       \
    "answers NULL, never an error or a stale value")                                               \
  X(46, FlushOfHostMemory, Should,                                                                 \
    "iflush after a receive into host memory returns NULL or a request that completes")            \
  X(47, TruncationReported, Should,                                                                \
    "a send larger than its receive fails, rather than completing truncated")                      \
  X(48, CallsReturnPromptly, Should,                                                               \
    "listen, connect, accept, deregMr and the closes each return within a second")                 \
  X(49, PropertiesPlausible, Should,                                                               \
    "latency is not negative and maxComms is at least 1, values NCCL tolerates")                   \
  X(50, PeerDeathSurfaces, Should,                                                                 \
    "a dead peer surfaces as an error within a bounded time, never as a hang")                     \
  X(51, CloseWithRequestsInFlight, Must,                                                           \
    "comms deregister and close, without hanging or crashing, with requests in flight")            \
  X(52, NoLeaks, Should, "create/destroy cycles return every descriptor")                          \
  X(53, GarbageHandlesRejected, Should,                                                            \
    "a connect handle no listen produced is refused without a crash")                              \
  X(54, BadMhandlesRejected, Should, "an mhandle regMr never returned is refused without a crash") \
  X(55, StrayConnectionsIgnored, Must,                                                             \
    "a connection to the listen endpoint that closes at once or sends what is not a hello "        \
    "neither fails accept nor keeps the real peer out")                                            \
  X(56, FailedConnectIsolated, Should,                                                             \
    "a connect that cannot succeed harms only its own comm: later connects still work")            \
  X(57, SilentStraysTolerated, Should,                                                             \
    "a stray that stays silent, stops halfway through a hello or replays one keeps no real "       \
    "peer out")                                                                                    \
  X(60, NcclJobsSucceed, Must,                                                                     \
    "real NCCL jobs over the plugin end with exact results, every channel through it, in "         \
    "bounded time")                                                                                \
  X(70, RmaTableComplete, Must,                                                                    \
    "RMA and proxy GIN tables have every member NCCL calls and one name; devices are GIN_PROXY "   \
    "with a power-of-two maxRecvs")                                                                \
  X(71, RmaConnectCollective, Must,                                                                \
    "RMA connect is collective over every rank's handle; contexts and symmetric registrations "    \
    "follow, in one order on every rank")                                                          \
  X(72, RmaPutsLand, Must,                                                                         \
    "iput writes its bytes at the target's registered base + dstOff, every size from 0, to "       \
    "every rank and to itself")                                                                    \
  X(73, RmaSignalsExact, Must,                                                                     \
    "iputSignal adds exactly: 1 for INC, the value for ADD, atomically across peers")              \
  X(74, RmaStrongSignalOrdering, Must,                                                             \
    "a strong signal is visible only after its payload and every earlier put on its context to "   \
    "that rank")                                                                                   \
  X(75, RmaGetAndFlush, Must,                                                                      \
    "iget reads the target's bytes; after iflush they are in local memory")                        \
  X(76, RmaRequestsReturned, Must,                                                                 \
    "a successful iput, iputSignal or iget returns a request, with 32 x maxRecvs outstanding per " \
    "context and peer")                                                                            \
  X(77, RmaLocalCompletion, Must, "test() done on a put means its source may be reused at once")   \
  X(78, RmaPeerDeathReported, Must,                                                                \
    "a dead peer surfaces as an error from test() or the next call within a bound; teardown "      \
    "still returns")                                                                               \
  X(79, RmaLifecycleRepeatable, Must,                                                              \
    "init, connect, contexts, registrations and teardown work again and again in one process, "    \
    "several at once, torn down in any order")                                                     \
  X(80, CollNetTableComplete, Must,                                                                \
    "CollNet table has every member NCCL calls; every device has host memory and "                 \
    "maxCollBytes in (0, 1 TiB]")                                                                  \
  X(81, CollNetDescribesNetDevices, Must,                                                          \
    "CollNet devices are the net table's, index by index, with the same name, pciPath, guid, "     \
    "speed, port, latency and maxComms")                                                           \
  X(82, CollNetConnectCollective, Must,                                                            \
    "CollNet connect is collective over every rank's handle; a rank that declines leaves the "     \
    "others an error or no collComm, never a hang")                                                \
  X(83, CollNetReduceSupportHonest, Must,                                                          \
    "reduceSupport answers every type and the four operations without an error, the same on "      \
    "every rank")                                                                                  \
  X(84, CollNetAllReduceExact, Must,                                                               \
    "iallreduce leaves the exact elementwise reduction of every rank on every rank, in and out "   \
    "of place")                                                                                    \
  X(85, CollNetManyInFlight, Must,                                                                 \
    "many CollNet operations may be in flight and complete in any order; a NULL request means "    \
    "post again, never an error")                                                                  \
  X(86, CollNetWindows, Must,                                                                      \
    "iallgather and ireducescatter deliver exactly their window of the whole, with NCCL's "        \
    "pointer convention")                                                                          \
  X(87, CollNetGatherScatterNotNull, Must,                                                         \
    "tables v8 to v11 have non-NULL iallgather and ireducescatter, which NCCL wraps and calls "    \
    "through")

enum class Rule : int {
#define NCCLNET_CONTRACT_ENUMERATOR(number, name, severity, title) name = number,
  NCCLNET_CONTRACT_RULES(NCCLNET_CONTRACT_ENUMERATOR)
#undef NCCLNET_CONTRACT_ENUMERATOR
};

struct RuleInfo {
  Rule rule;
  const char* name;  // "TagRouting": the enumerator's own spelling
  Severity severity;
  const char* title;  // one line: what the plugin must do
};

namespace detail {
inline constexpr std::array kRules = {
#define NCCLNET_CONTRACT_ROW(number, name, severity, title) \
  RuleInfo{Rule::name, #name, Severity::severity, title},
    NCCLNET_CONTRACT_RULES(NCCLNET_CONTRACT_ROW)
#undef NCCLNET_CONTRACT_ROW
};
}  // namespace detail

// Every rule, in number order.
constexpr const decltype(detail::kRules)& allRules() {
  return detail::kRules;
}

constexpr int ruleNumber(Rule rule) {
  return static_cast<int>(rule);
}

// The row of `rule`. A value that names no rule (only a cast can make one)
// gets the first row.
constexpr const RuleInfo& ruleInfo(Rule rule) {
  for (const RuleInfo& info : allRules()) {
    if (info.rule == rule) return info;
  }
  return allRules().front();
}

// The rule numbered `number`, or nullptr (a number read from a log line).
constexpr const RuleInfo* findRule(int number) {
  for (const RuleInfo& info : allRules()) {
    if (ruleNumber(info.rule) == number) return &info;
  }
  return nullptr;
}

constexpr const char* severityName(Severity s) {
  return s == Severity::Must ? "MUST" : "SHOULD";
}

constexpr bool isShould(Rule rule) {
  return ruleInfo(rule).severity == Severity::Should;
}

// "rule 30 TagRouting": how every report and log line names a rule, and
// what the suite's Nccl tier reads back from the checker's lines.
inline std::string ruleTag(Rule rule) {
  return "rule " + std::to_string(ruleNumber(rule)) + " " + ruleInfo(rule).name;
}

// "rule 30 TagRouting (tags route a send into ...)".
inline std::string ruleLabel(Rule rule) {
  return ruleTag(rule) + " (" + ruleInfo(rule).title + ")";
}

namespace detail {
// Number order, each number once (an enum takes two enumerators of one
// value without a word; the names are unique because enumerators are).
constexpr bool numbersAscend() {
  for (size_t i = 1; i < kRules.size(); i++) {
    if (ruleNumber(kRules[i - 1].rule) >= ruleNumber(kRules[i].rule)) return false;
  }
  return true;
}
constexpr bool everyTitleSet() {
  for (const RuleInfo& info : kRules) {
    if (info.title == nullptr || info.title[0] == '\0') return false;
  }
  return true;
}
}  // namespace detail

static_assert(detail::numbersAscend(), "NCCLNET_CONTRACT_RULES: number order, each number once");
static_assert(detail::everyTitleSet(), "NCCLNET_CONTRACT_RULES: every rule has a title");

}  // namespace ncclnet::contract
