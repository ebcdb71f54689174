// SPDX-License-Identifier: Apache-2.0
// sdk-socket CollNet: one collComm. The "switch" of a CollNet is emulated
// by the heads themselves: every rank sends its contribution to every
// peer over the full mesh (rma/mesh.hpp), and every rank reduces all of
// them in rank order, so all ranks hold bitwise the same result
// (reduce.hpp).
//
// Operations are matched by a per-collComm sequence number: NCCL issues
// CollNet operations in the same order on every rank (coll_net.cc
// sendProxyProgress, "collective ordering") and keeps several in flight,
// from all the channels sharing the collComm (sharedConnect). One thread
// per collComm owns the sockets: for each peer it writes the operations in
// sequence order and reads them in sequence order, and only reads a
// peer's next operation once this rank has posted it too (TCP's flow
// control holds the sender back meanwhile; its thread keeps serving the
// other peers, so nothing waits on a cycle). An operation completes once
// every peer has its contribution and this rank has every peer's; since
// each peer's stream is in order, operations complete in order.
//
// Failure: a peer that closes or resets its connection, or sends what was
// not expected, fails the comm with one WARN line (StickyError); every
// request not yet completed then reports the error from test(). A peer
// host that vanishes silently is bounded by the TCP user timeout and
// keepalive the mesh sets (NCCLNET_SOCKET_PEER_TIMEOUT_MS). There is no
// limit on how long a live peer may take to post its side of an
// operation: a rank busy elsewhere is not a failure, and NCCL's own
// transports wait for it too.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ncclnet/abi/collnet_v12.h"
#include "ncclnet/log.hpp"
#include "ncclnet/socket_io.hpp"
#include "ncclnet/sticky_error.hpp"
#include "wire.hpp"

namespace ncclnet::socket::collnet {

// Operations one collComm holds at once: NCCL keeps at most NCCL_STEPS (8)
// per channel in flight, and several channels share a collComm. One more
// is answered with a NULL request, which NCCL retries (collnet_v12.h:
// iallreduce "may return request == NULL").
constexpr int kMaxInFlight = 64;

class CollComm;

// What regMr hands out.
struct Registration {
  void* data;
  size_t size;
};

// A range of memory one contribution is read from or written to.
struct Segment {
  uint8_t* at;
  size_t size;
};

// One operation: what a request handed to NCCL points to.
struct Operation {
  enum State : int { kFree = 0, kActive = 1, kDone = 2 };
  CollComm* comm = nullptr;
  std::atomic<int> state{kFree};
  // Fixed when posted; then read by the comm's thread only.
  Kind kind = Kind::kAllReduce;
  uint64_t seq = 0;
  ncclDataType_t type = ncclInt8;
  ncclRedOp_t op = ncclSum;
  size_t reduceCount = 0;                     // elements folded into reduceDst (0: nothing to fold)
  uint8_t* reduceDst = nullptr;               // recvData
  int size = 0;                               // what test() reports
  std::vector<std::vector<Segment>> sends;    // [peer]: header, then payload ranges
  std::vector<std::vector<Segment>> recvs;    // [peer]: payload ranges
  std::vector<uint64_t> recvBytes;            // [peer]
  std::vector<std::vector<uint8_t>> headers;  // [peer]: kHeaderBytes each
  std::vector<std::vector<uint8_t>> staging;  // [rank]: contributions to fold
  std::vector<const void*> sources;           // [rank]: the fold's operands, in rank order

  void clear();
};

class CollComm {
 public:
  CollComm(int rank, int nranks, const Logger& log);
  ~CollComm();  // stops the thread, closes the mesh, frees every operation
  CollComm(const CollComm&) = delete;
  CollComm& operator=(const CollComm&) = delete;

  // Makes what can fail (the wake eventfd, the thread, which waits for
  // attach) before the group is confirmed: once every peer said ready,
  // nothing may fail on this rank alone, since NCCL agrees on CollNet's
  // outcome only within a node (transport.cc ncclTransportCollNetCheck)
  // and a node that alone gave up leaves the others in a bootstrap
  // collective it never joins.
  ncclResult_t prepare();
  // Hands the confirmed mesh (one socket per peer; `rank`'s entry empty)
  // to the thread.
  void attach(std::vector<Fd> peers);

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const Logger& log() const { return log_; }

  ncclResult_t allReduce(void* sendData, void* recvData, size_t count, ncclDataType_t type,
                         ncclRedOp_t op, size_t maxBytes, void** request);
  // The window operations. The logical buffer is nranks * bytesPerRank
  // bytes, rank r's block at [r * bytesPerRank, (r + 1) * bytesPerRank);
  // one call covers [windowOffset, windowOffset + windowBytes) of it, the
  // offset counted from the start of the whole logical buffer. Only the part
  // of this rank's block inside the window is this rank's business, and
  // NCCL points at its first byte: iallgather's sendData and
  // ireducescatter's recvData are the block's start advanced by
  // windowOffset % bytesPerRank when the window starts inside this rank's
  // block, the block's start otherwise (coll_net.cc collNetRegIallgather
  // and collNetRegIreducescatter; the staged variants collNetIallgather and
  // collNetIreducescatter reach the same layout through calcAlgoOffset,
  // which clamps the send side of an all-gather and the receive side of a
  // reduce-scatter to this rank's block). The parts (recvParts,
  // sendParts) hold the whole window, concatenated in order; NCCL passes
  // one part, more are accepted. test() reports windowBytes for
  // iallgather and the bytes written at recvData for ireducescatter.
  ncclResult_t allGather(void* sendData, int nRecvParts, const ncclNetSGE_v12_t* recvParts,
                         size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                         size_t maxBytes, void** request);
  ncclResult_t reduceScatter(int nSendParts, const ncclNetSGE_v12_t* sendParts, void* recvData,
                             size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                             ncclDataType_t type, ncclRedOp_t op, size_t maxBytes, void** request);
  // `request` is one of this comm's operations.
  ncclResult_t test(Operation* op, int* done, int* size);

  // Registrations: host memory needs none, but NCCL hands the handles back
  // and deregisters them, so they are tracked to catch a foreign one.
  void* addRegistration(void* data, size_t size);
  bool removeRegistration(void* mhandle);

 private:
  struct Peer {
    Fd fd;
    bool closed = false;   // its stream ended while nothing was expected
    uint64_t sendSeq = 0;  // the operation being written to it
    size_t sendSegment = 0;
    size_t sendOffset = 0;
    uint64_t recvSeq = 0;  // the operation being read from it
    uint8_t inHeader[kHeaderBytes];
    size_t inGot = 0;  // of the header; then the payload follows
    size_t recvSegment = 0;
    size_t recvOffset = 0;
  };

  // A free operation, or null (the caller answers a NULL request).
  Operation* claim();
  // Assigns the sequence number, stamps the headers and hands `op` to the
  // thread.
  ncclResult_t publish(Operation* op, const char* fn, void** request);
  void release(Operation* op);

  void run();
  bool writeSome(int peer, Peer& p, const std::deque<Operation*>& active, uint64_t firstSeq);
  bool readSome(int peer, Peer& p, const std::deque<Operation*>& active, uint64_t firstSeq);
  void complete(Operation* op);
  void wake();

  const int rank_;
  const int nranks_;
  Logger log_;
  StickyError error_;
  std::vector<Peer> peers_;  // [rank]; the thread's alone once attached
  std::unique_ptr<Operation[]> ops_;

  std::mutex mutex_;  // guards what follows
  std::vector<Operation*> free_;
  std::deque<Operation*> active_;  // in sequence order
  uint64_t nextSeq_ = 0;
  std::unordered_map<void*, std::unique_ptr<Registration>> registrations_;

  Fd wake_;  // an eventfd: an operation was posted, or stop
  std::atomic<bool> stop_{false};
  std::atomic<bool> attached_{false};  // peers_ is the thread's from here on
  std::thread thread_;
};

}  // namespace ncclnet::socket::collnet
