// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: which ncclResult_t a plugin returns for each way of failing.
//
// A data-path failure reaches the application only as the code of
// ncclCommGetAsyncError (src/proxy.cc ncclProxyProgress stores the first
// error of the proxy progress thread in proxyState->asyncResult, and
// src/init.cc ncclCommGetAsyncError returns it), and the user reads it
// through ncclGetErrorString (src/init.cc): ncclRemoteError "remote process
// exited or there was a network error", ncclSystemError "unhandled system
// error", ncclInternalError "internal error - please report this issue to
// the NCCL developers", ncclInvalidUsage and ncclInvalidArgument "... run
// with NCCL_DEBUG=WARN for details". The code is the first clue of whose
// fault a failure is, so each kind below has one code, written once here;
// plugins name the kind, never the code. docs/contract.md ("Result codes")
// gives the table with NCCL's own choice for each.
#pragma once

#include "ncclnet/abi/result.h"

namespace ncclnet {

enum class Failure {
  // regMr of a pointer type the plugin does not support. NCCL only passes
  // types that ptrSupport announced, so a correct NCCL never gets here:
  // src/transport/net_socket.cc ncclNetSocketRegMr returns ncclInternalError.
  kUnsupportedMemory,
  // A device index outside 0..ndev-1: NCCL only passes indices below the
  // count devices() returned, so the argument is wrong, not the state.
  kBadDevice,
  // The peer closed, reset, or stopped answering. src/misc/socket.cc
  // socketProgressOpt returns ncclRemoteError for every failed send or recv
  // on a connected socket, whatever the errno.
  kPeerGone,
  // The peer sent what the protocol never sends (a malformed header, an
  // answer of another plugin or version): NCCL's IB transport reports a
  // failed remote operation the same way as a dead peer (src/transport/
  // net_ib.cc ncclIbTest: ncclRemoteError).
  kPeerMisbehaved,
  // A message longer than the receive posted for it: the ranks disagree on
  // sizes or protocols. src/transport/net_socket.cc ncclNetSocketTest
  // returns ncclInvalidUsage ("message truncated").
  kTruncated,
  // No free slot or request where NCCL's in-flight limit says there must
  // be one (iflush: src/transport/net.cc recvProxyProgress treats a NULL
  // flush request as done, so it cannot be "try again").
  // src/transport/net_ib.cc ncclIbGetRequest returns ncclInternalError.
  // isend and irecv return a NULL request instead, which NCCL retries.
  kExhausted,
  // A connect handle this plugin's listen did not write (wrong magic,
  // version or secret: another build, a corrupted exchange): the job handed
  // the plugin bytes that are not its handle.
  kBadHandle,
  // malloc, new or a pinned allocation failed: src/include/alloc.h
  // ncclCalloc returns ncclSystemError.
  kOutOfMemory,
  // A call into the OS, verbs, libfabric or the CUDA driver failed for a
  // local reason: src/include/checks.h SYSCHECK returns ncclSystemError.
  kSystemCall,
  // An argument a correct NCCL never passes: n outside 1..maxRecvs, a
  // buffer outside its registration, a request of another comm. The SDK's
  // object model answers a dead or foreign handle the same way.
  kBadArgument,
  // The job broke a rule of the plugin it could have kept: a knob value the
  // knob does not allow, a tag wider than the fabric carries.
  kInvalidUsage,
  // A state a correct NCCL or peer never produces.
  kInternal,
};

// The one code of each kind.
constexpr ncclResult_t resultOf(Failure failure) {
  switch (failure) {
    case Failure::kUnsupportedMemory: return ncclInternalError;
    case Failure::kBadDevice: return ncclInvalidArgument;
    case Failure::kPeerGone: return ncclRemoteError;
    case Failure::kPeerMisbehaved: return ncclRemoteError;
    case Failure::kTruncated: return ncclInvalidUsage;
    case Failure::kExhausted: return ncclInternalError;
    case Failure::kBadHandle: return ncclInvalidUsage;
    case Failure::kOutOfMemory: return ncclSystemError;
    case Failure::kSystemCall: return ncclSystemError;
    case Failure::kBadArgument: return ncclInvalidArgument;
    case Failure::kInvalidUsage: return ncclInvalidUsage;
    case Failure::kInternal: return ncclInternalError;
  }
  return ncclInternalError;
}

// "kPeerGone" and so on, for logs and tests.
const char* failureName(Failure failure);

}  // namespace ncclnet
