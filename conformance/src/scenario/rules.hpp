// SPDX-License-Identifier: Apache-2.0
// The rules of the net-plugin contract the suite checks. Each has a number
// and a name (both as in docs/contract.md, which says for each what NCCL
// does that relies on it), a one-line title and a severity: a MUST
// violation breaks, hangs or corrupts an NCCL job and fails the run; a
// SHOULD violation is robustness NCCL itself does not exercise, reported as
// a warning (a failure under --strict).
#pragma once

#include <string>
#include <vector>

namespace conformance {

enum class Rule : int {
  ProfileExpectation = 0,
  TablesExported = 1,
  NameSetAndConsistent = 2,
  InitPerCommunicator = 3,
  DevicesReported = 4,
  PhandlesMayBeNull = 5,
  PciPathValid = 6,
  NamesUnique = 8,
  PtrSupportCoherent = 9,
  GlobalRegistrationCheap = 10,
  ForceFlushHonoured = 11,
  SpeedPositive = 12,
  LatencyValid = 14,
  MaxCommsPositive = 15,
  MaxRecvsInRange = 16,
  DeviceTypeKnown = 17,
  MaxBytesInRange = 18,
  VirtualDevicesValid = 19,
  NewerFieldsValid = 20,
  ListenNeverBlocks = 21,
  ConnectAcceptNeverBlock = 22,
  DevCommMayBeNull = 23,
  TrafficClassAccepted = 24,
  RegMrHostAndCuda = 25,
  RegMrDmaBuf = 26,
  DeregMrReleases = 27,
  InFlightLimits = 28,
  NullRequestRetry = 29,
  TagRouting = 30,
  GroupedCompletion = 31,
  TruncationIsAnError = 32,
  ZeroByteMessages = 33,
  OptionalCompletionTestable = 34,
  CompletionReportsSizes = 35,
  FlushMakesVisible = 36,
  IrecvConsumedAccepted = 37,
  SendsOutliveClose = 38,
  ThreadSafe = 40,
  ProfilerEventsWellFormed = 41,
  ReinitAfterLastFinalize = 42,
  ReloadAfterUnload = 43,
  PhysicalDeviceListsItself = 44,
  ReadmeRequestLimits = 45,
  FlushOfHostMemory = 46,
  TruncationReported = 47,
  CallsReturnPromptly = 48,
  PropertiesPlausible = 49,
  PeerDeathSurfaces = 50,
  CloseWithRequestsInFlight = 51,
  NoLeaks = 52,
  GarbageHandlesRejected = 53,
  BadMhandlesRejected = 54,
  StrayConnectionsIgnored = 55,
  FailedConnectIsolated = 56,
  SilentStraysTolerated = 57,
  NcclJobsSucceed = 60,
};

enum class Severity { Must, Should };

struct RuleInfo {
  Rule rule;
  const char* name;  // "TagRouting", as in docs/contract.md
  Severity severity;
  const char* title;  // one line: what the plugin must do
};

// Every rule, in number order.
const std::vector<RuleInfo>& allRules();
const RuleInfo& ruleInfo(Rule rule);
int ruleNumber(Rule rule);
const char* severityName(Severity s);  // "MUST" / "SHOULD"
bool isShould(Rule rule);

// "rule 30 TagRouting (tags route a send into ...)".
std::string ruleLabel(Rule rule);

}  // namespace conformance
