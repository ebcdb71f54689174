// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the receiving end of a connection.
#pragma once

#include <deque>
#include <memory>

#include "connection_sockets.hpp"
#include "ncclnet/request_pool.hpp"
#include "requests.hpp"
#include "timeline.hpp"

namespace ncclnet::socket {

class RecvComm {
 public:
  // `timeline`: what NCCLNET_SOCKET_TIMELINE and _TRACE_DIR want at close.
  RecvComm(std::unique_ptr<ConnectionSockets> core, TimelineOptions timeline);
  ~RecvComm();
  RecvComm(const RecvComm&) = delete;
  RecvComm& operator=(const RecvComm&) = delete;

  ncclResult_t irecv(int n, void** data, size_t* sizes, int* tags, void** request);
  ncclResult_t test(RecvRequest* request, int* done, int* sizes);
  // NCCL's kernel is done with a receive's data (UNPACK: its pages go back).
  ncclResult_t consumed(void* request);
  // UNPACK: a receive keeps its bounce pages after test() reported it done,
  // until consumed() (set before accept hands the comm out; never changes).
  bool holdsUntilConsumed() const { return unpack_ != nullptr; }

  // From now on payload lands in `receiver`'s bounce pages (before any irecv).
  void enableUnpack(std::unique_ptr<unpack::Receiver> receiver);

 private:
  // Flushes clear-to-sends, reads headers and inline payloads, queues the
  // stripes of large messages. Caller holds the core's mutex.
  void pump();
  // One header: returns false when the comm failed.
  bool onHeader(const DataHeader& h);
  // Where the message for buffer `slot` of `r` lands.
  Landing landing(RecvRequest* r, int slot, size_t size) const;
  // UNPACK: whether one receive of `capacity` bytes fits the arena (logs
  // when not).
  bool fitsBouncePages(size_t capacity) const;
  // UNPACK: takes bounce pages for `r`; false when there is no room now.
  bool reservePages(RecvRequest* r, size_t capacity);
  // Ends a request that will not reach irecvConsumed (failed).
  void retire(RecvRequest* r);

  std::unique_ptr<ConnectionSockets> core_;
  RequestPool<RecvRequest> pool_{NCCL_NET_MAX_REQUESTS};
  std::deque<RecvRequest*> matching_;  // posted receives with unmatched buffers, oldest first
  // An inline payload being copied out of the control stream.
  Landing inlineTo_;
  size_t inlineDone_ = 0;
  RecvRequest* inlineFor_ = nullptr;
  // UNPACK mode (null: host mode, payload lands in NCCL's buffers).
  std::unique_ptr<unpack::Receiver> unpack_;
  uint64_t nextSeq_ = 0;
  size_t unconsumed_ = 0;  // receives posted and not yet consumed
  Timeline timeline_;
};

}  // namespace ncclnet::socket
