// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: a comm's first failure, kept for every later call.
//
// NCCL keeps calling test() on a comm's other requests after one failed
// (src/transport/net.cc sendProxyProgress and recvProxyProgress test each
// request on its own), and the proxy stops at the first error anyway
// (src/proxy.cc ncclProxyProgress). So a comm that failed once reports the
// same code from then on: the first failure is logged, with its reason,
// and the calls that follow return its code without a new line (contract
// rule 50 PeerDeathSurfaces; a dead peer is "not repeated" in the log).
//
// Thread-safe: a comm's helper threads, an async-event watcher and NCCL's
// progress thread may all record; reading the code is one atomic load.
//
//   ncclnet::StickyError error;
//   if (!error.ok()) return error.code();
//   if (peerClosed) return error.fail(log, what, ncclnet::Failure::kPeerGone,
//                                     "connection closed by the peer");
#pragma once

#include <atomic>
#include <cstdarg>
#include <mutex>
#include <string>

#include "ncclnet/abi/result.h"
#include "ncclnet/log.hpp"
#include "ncclnet/result_policy.hpp"

namespace ncclnet {

class StickyError {
 public:
  StickyError() = default;
  StickyError(const StickyError&) = delete;
  StickyError& operator=(const StickyError&) = delete;

  // ncclSuccess until the first failure, then its code for good.
  ncclResult_t code() const { return code_.load(std::memory_order_acquire); }
  bool ok() const { return code() == ncclSuccess; }
  // The first failure's one-line reason ("" while ok()).
  std::string reason() const;

  // Records `code` and `reason` unless a failure is recorded already; true
  // when this call was the first, whose caller then owns the log line (an
  // event that fails several comms logs once for all of them). ncclSuccess
  // records nothing.
  bool record(ncclResult_t code, const std::string& reason);
  // Records `failure` with the formatted reason and, when it is the first,
  // logs one WARN "<what>: <reason>" (just the reason when `what` is null).
  // Returns the comm's code: the first
  // failure's, which need not be this one's.
  ncclResult_t fail(const Logger& log, const char* what, Failure failure, const char* fmt, ...)
      __attribute__((format(printf, 5, 6)));
  // fail() for a caller that is itself variadic.
  ncclResult_t vfail(const Logger& log, const char* what, Failure failure, const char* fmt,
                     va_list args) __attribute__((format(printf, 5, 0)));

 private:
  std::atomic<ncclResult_t> code_{ncclSuccess};
  mutable std::mutex mutex_;  // guards reason_, and orders the first record
  std::string reason_;
};

}  // namespace ncclnet
