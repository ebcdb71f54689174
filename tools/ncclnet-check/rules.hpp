// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the rules of docs/contract.md that one side of the ABI can
// judge call by call, with the numbers and names the contract gives them.
#pragma once

namespace ncclnet::check {

struct CheckRule {
  int number;
  const char* name;
};

namespace rules {
// listen returns at once.
constexpr CheckRule kListenNeverBlocks{21, "ListenNeverBlocks"};
// connect and accept return at once.
constexpr CheckRule kConnectAcceptNeverBlock{22, "ConnectAcceptNeverBlock"};
// deregMr of every handle before the comm closes; never of a buffer that a
// request in flight still uses.
constexpr CheckRule kDeregMrReleases{27, "DeregMrReleases"};
// At most 32 receives per recvComm, 32 x maxRecvs sends per sendComm.
constexpr CheckRule kInFlightLimits{28, "InFlightLimits"};
// A request the plugin cannot take is NULL in *request, never a stale value
// or the optional-completion preset; isend/irecv/test poll, they never wait.
constexpr CheckRule kNullRequestRetry{29, "NullRequestRetry"};
// The n buffers of a grouped receive complete together, each with its size.
constexpr CheckRule kGroupedCompletion{31, "GroupedCompletion"};
// A receive never reports more bytes than it posted.
constexpr CheckRule kTruncationIsAnError{32, "TruncationIsAnError"};
// test reports done with the sizes sent; a request is tested until done and
// never after.
constexpr CheckRule kCompletionReportsSizes{35, "CompletionReportsSizes"};
// irecvConsumed once per completed receive, after test reported it done.
constexpr CheckRule kIrecvConsumedAccepted{37, "IrecvConsumedAccepted"};
// Comm handles are ones the plugin returned and did not close.
constexpr CheckRule kGarbageHandlesRejected{53, "GarbageHandlesRejected"};
// mhandles are ones regMr returned on the same comm and not yet deregistered.
constexpr CheckRule kBadMhandlesRejected{54, "BadMhandlesRejected"};
}  // namespace rules

}  // namespace ncclnet::check
