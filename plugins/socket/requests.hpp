// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the request objects NCCL holds between isend/irecv and test.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ncclnet/abi/common.h"
#include "ncclnet/unpack.hpp"
#include "timeline.hpp"
#include "wire.hpp"

namespace ncclnet::socket {

// The type NCCL's requests have in the SDK's object model: the SDK tells
// test() which comm (and so which kind) a request belongs to.
struct RequestBase {};

struct SendRequest : RequestBase {
  char* data = nullptr;
  size_t size = 0;
  int tag = 0;
  // Its header is queued: it was paired with a receive buffer (or refused),
  // or it left eagerly, before its clear-to-send.
  bool headerQueued = false;
  // Its header (and inline payload) are out once the comm sent this many
  // control bytes.
  uint64_t controlEnd = 0;
  ncclResult_t error = ncclSuccess;
  Pending remaining;     // stripes still moving
  int64_t postedNs = 0;  // NCCLNET_SOCKET_TIMELINE stamps
  int64_t matchedNs = 0;
};

struct RecvRequest : RequestBase {
  int n = 0;
  char* data[kMaxRecvs] = {};
  size_t capacity[kMaxRecvs] = {};
  int tags[kMaxRecvs] = {};
  int sizes[kMaxRecvs] = {};
  bool slotMatched[kMaxRecvs] = {};
  int matchedSlots = 0;
  ncclResult_t error = ncclSuccess;
  Pending remaining;     // stripes and inline payloads still arriving
  int64_t postedNs = 0;  // NCCLNET_SOCKET_TIMELINE stamps (matched: the last header)
  int64_t matchedNs = 0;
  // UNPACK: the bounce pages the message lands in, its slot in the comm's
  // queue, and whether test() reported it done (it then stays until
  // irecvConsumed gives its pages back).
  unpack::Pages pages;
  uint64_t seq = 0;
  bool reported = false;
};

}  // namespace ncclnet::socket
