// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the rules of docs/contract.md that one side of the ABI can
// judge call by call. Each constant is the contract's own row
// (ncclnet/contract/rules.hpp, which ncclnet-conformance uses too), so the
// number and name in a log line are the contract's by construction; what
// is the checker's own is which rules it judges, and what it judges of each.
#pragma once

#include "ncclnet/contract/rules.hpp"

namespace ncclnet::check {

using CheckRule = contract::RuleInfo;

namespace rules {
using contract::Rule;
using contract::ruleInfo;
// listen, connect, accept, isend, irecv and test each return within
// NCCLNET_CHECK_BLOCK_US. One process cannot tell a call that waits for its
// peer (rules 21, 22: NCCL hangs, which the watchdog reports) from one that
// is only slow (NCCL runs, slowly), so a slow call is the SHOULD rule's.
inline constexpr const CheckRule& kCallsReturnPromptly = ruleInfo(Rule::CallsReturnPromptly);
// deregMr of every handle before the comm closes; never of a buffer that a
// request in flight still uses.
inline constexpr const CheckRule& kDeregMrReleases = ruleInfo(Rule::DeregMrReleases);
// At most 32 receives per recvComm, 32 x maxRecvs sends per sendComm.
inline constexpr const CheckRule& kInFlightLimits = ruleInfo(Rule::InFlightLimits);
// A request the plugin cannot take is NULL in *request, never a stale value
// or the optional-completion preset.
inline constexpr const CheckRule& kNullRequestRetry = ruleInfo(Rule::NullRequestRetry);
// The n buffers of a grouped receive complete together, each with its size.
inline constexpr const CheckRule& kGroupedCompletion = ruleInfo(Rule::GroupedCompletion);
// A receive never reports more bytes than it posted.
inline constexpr const CheckRule& kTruncationIsAnError = ruleInfo(Rule::TruncationIsAnError);
// test reports done with the sizes sent; a request is tested until done and
// never after.
inline constexpr const CheckRule& kCompletionReportsSizes = ruleInfo(Rule::CompletionReportsSizes);
// irecvConsumed once per completed receive, after test reported it done.
inline constexpr const CheckRule& kIrecvConsumedAccepted = ruleInfo(Rule::IrecvConsumedAccepted);
// Comm handles are ones the plugin returned and did not close.
inline constexpr const CheckRule& kGarbageHandlesRejected = ruleInfo(Rule::GarbageHandlesRejected);
// mhandles are ones regMr returned on the same comm and not yet deregistered.
inline constexpr const CheckRule& kBadMhandlesRejected = ruleInfo(Rule::BadMhandlesRejected);

// The one-sided tables the checker judges (one_sided.hpp).
// Members NCCL calls without a NULL check, one name across the library's
// one-sided tables, and devices NCCL's proxy can drive: GIN_PROXY (or, for
// GIN, a type NCCL has device code for), a power-of-two maxRecvs, host memory.
inline constexpr const CheckRule& kRmaTableComplete = ruleInfo(Rule::RmaTableComplete);
// A successful iput, iputSignal or iget returns a fresh request, and none is
// refused while fewer than 32 x maxRecvs are outstanding to its peer.
inline constexpr const CheckRule& kRmaRequestsReturned = ruleInfo(Rule::RmaRequestsReturned);
}  // namespace rules

}  // namespace ncclnet::check
