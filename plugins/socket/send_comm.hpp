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
  // clear-to-sends, pair sends with them (or send them eagerly), and move
  // stripes on sockets no helper is driving. Caller holds the core's mutex.
  void pump();
  // Whether the clear-to-sends are worth a system call now: a send waits
  // for one, or half the credit is out. Otherwise they stay in the kernel
  // (a frame per receive; the credit bounds how many pile up).
  bool wantsClearToSends() const;
  void matchSends();
  // Pairs `tag` with the next receive buffer of that tag the peer announced
  // and gives its size; false when none is announced yet.
  bool takeBuffer(int tag, size_t* capacity);
  // Whether a send of `size` bytes may leave now, before its clear-to-send.
  bool mayGoEager(size_t size) const;
  struct Unpaired;
  // Sends `r` before its clear-to-send. From here on it may report done:
  // its entry in unpaired_ keeps only its tag and size.
  void sendEager(SendRequest* r);
  // An eager send met its receive buffer.
  void returnCredit(const Unpaired& send, size_t capacity);
  // A send that waited met its receive buffer: header, then payload.
  void sendPaired(SendRequest* r, size_t capacity);
  void sendHeader(SendRequest* r, uint8_t flags);

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

  // A send not yet paired with a receive buffer, in posting order. An eager
  // send is paired only to return its credit (and may have reported done
  // already, so only its tag and size are kept).
  struct Unpaired {
    SendRequest* request;  // nullptr: it has left (eagerly)
    int tag;
    size_t size;
  };

  std::unique_ptr<ConnectionSockets> core_;
  size_t inlineBytes_;
  RequestPool<SendRequest> pool_{NCCL_NET_MAX_REQUESTS * kMaxRecvs};
  std::deque<Unpaired> unpaired_;
  size_t waitingForCts_ = 0;       // sends in unpaired_ that have not left
  size_t eagerUnpaired_ = 0;       // bytes of the eager sends in unpaired_
  std::deque<PostedRecv> posted_;  // the peer's posting order
  Timeline timeline_;
};

}  // namespace ncclnet::socket
