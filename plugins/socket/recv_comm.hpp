// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the receiving end of a connection.
#pragma once

#include <deque>
#include <list>
#include <memory>
#include <vector>

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
  // An eager message that arrived before its receive was posted.
  struct Held {
    int tag = 0;
    size_t size = 0;
    std::unique_ptr<char[]> bytes;     // `size` bytes
    bool arrived = false;              // every payload byte is in `bytes`
    RecvRequest* claimedBy = nullptr;  // a receive took it while it arrived
    int slot = 0;
    bool dropped = false;  // its receive was too small: it is read and dropped
  };
  using HeldList = std::list<Held>;

  // Where the inline payload being read goes: a receive's buffer, a held
  // message, or nowhere (a truncated eager message).
  struct InlineTarget {
    bool active = false;
    Landing to;
    size_t done = 0;
    RecvRequest* request = nullptr;  // counts the payload in its `remaining`
    bool toHeld = false;
    HeldList::iterator held;
  };

  static InlineTarget inlineInto(const Landing& to, RecvRequest* request);

  // Flushes clear-to-sends, reads headers and inline payloads, queues the
  // stripes of large messages. Caller holds the core's mutex.
  void pump();
  // One header: returns false when the comm failed.
  bool onHeader(const DataHeader& h);
  // The receive buffer the next message of `tag` fills: the first unfilled
  // one with that tag in the oldest receive that has one (the sender pairs
  // the same way). False when no receive posted so far has one.
  bool findBuffer(int tag, RecvRequest** r, int* slot) const;
  // Fills buffer `slot` of `r` with a message of `size` bytes; false when
  // the message does not fit (the receive then fails as truncated).
  bool fill(RecvRequest* r, int slot, size_t size, int tag);
  // An eager message with no receive yet: kept until one is posted.
  bool hold(const DataHeader& h);
  // A new receive takes the held messages of its tags, oldest first;
  // returns their bytes.
  size_t claimHeld(RecvRequest* r);
  // Queues a receive's clear-to-send; `filled`: held messages filled it.
  void announce(const uint8_t* frame, bool filled, size_t heldBytes);
  // A held message whose bytes and receive are both there: delivered.
  void settleHeld(HeldList::iterator held);
  void finishInline();
  void retireFilledReceives();
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
  InlineTarget inline_;                // the inline payload being copied out of the control stream
  HeldList held_;                      // arrival order
  size_t heldBytes_ = 0;               // of messages no receive claimed yet
  std::vector<char> discard_;          // lands a truncated eager payload
  std::vector<uint8_t> deferredCts_;   // clear-to-sends not queued yet (announce)
  size_t deferredCredit_ = 0;          // held bytes they return
  // UNPACK mode (null: host mode, payload lands in NCCL's buffers).
  std::unique_ptr<unpack::Receiver> unpack_;
  uint64_t nextSeq_ = 0;
  size_t unconsumed_ = 0;  // receives posted and not yet consumed
  Timeline timeline_;
};

}  // namespace ncclnet::socket
