// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the receiving end of a connection.
#pragma once

#include <deque>
#include <memory>

#include "core.hpp"
#include "ncclnet/request_pool.hpp"
#include "requests.hpp"

namespace ncclnet::socketnet {

class RecvComm {
 public:
  static constexpr uint32_t kMagic = 0x5243'5353;

  explicit RecvComm(std::unique_ptr<CommCore> core);

  bool valid() const { return magic_ == kMagic; }
  ncclResult_t irecv(int n, void** data, size_t* sizes, int* tags, void** request);
  ncclResult_t test(RecvRequest* request, int* done, int* sizes);

 private:
  // Flushes clear-to-sends, reads headers and inline payloads, queues the
  // stripes of large messages. Caller holds the core's mutex.
  void pump();
  // One header: returns false when the comm failed.
  bool onHeader(const DataHeader& h);

  const uint32_t magic_ = kMagic;
  std::unique_ptr<CommCore> core_;
  RequestPool<RecvRequest> pool_{NCCL_NET_MAX_REQUESTS};
  std::deque<RecvRequest*> matching_;  // posted receives with unmatched buffers, oldest first
  // An inline payload being copied out of the control stream.
  char* inlineAt_ = nullptr;
  size_t inlineLeft_ = 0;
  RecvRequest* inlineFor_ = nullptr;
};

}  // namespace ncclnet::socketnet
