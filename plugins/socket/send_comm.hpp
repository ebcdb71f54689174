// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the sending end of a connection.
#pragma once

#include <deque>
#include <memory>

#include "connection_sockets.hpp"
#include "ncclnet/request_pool.hpp"
#include "requests.hpp"
#include "timeline.hpp"

namespace ncclnet::socket {

class SendComm {
 public:
  // `timeline`: what NCCLNET_SOCKET_TIMELINE and _TRACE_DIR want at close.
  SendComm(std::unique_ptr<ConnectionSockets> core, size_t inlineBytes, TimelineOptions timeline);
  ~SendComm();
  SendComm(const SendComm&) = delete;
  SendComm& operator=(const SendComm&) = delete;

  ncclResult_t isend(void* data, size_t size, int tag, void** request);
  ncclResult_t test(SendRequest* request, int* done, int* size);

 private:
  // Everything the connection can do without blocking: flush headers, read
  // clear-to-sends, pair sends with them, and move stripes on sockets no
  // helper is driving. Caller holds the core's mutex.
  void pump();
  void matchSends();
  void sendHeader(SendRequest* r, size_t ahead, int slot, uint8_t flags);

  struct PostedRecv {  // a receive the peer announced
    ClearToSend cts;
    bool filled[kMaxRecvs] = {};
    bool complete() const {
      for (int i = 0; i < cts.n; i++) {
        if (!filled[i]) return false;
      }
      return true;
    }
  };

  std::unique_ptr<ConnectionSockets> core_;
  size_t inlineBytes_;
  RequestPool<SendRequest> pool_{NCCL_NET_MAX_REQUESTS * kMaxRecvs};
  std::deque<SendRequest*> unmatched_;  // posting order
  std::deque<PostedRecv> posted_;       // the peer's posting order
  Timeline timeline_;
};

}  // namespace ncclnet::socket
