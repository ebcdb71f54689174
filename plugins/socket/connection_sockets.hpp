// SPDX-License-Identifier: Apache-2.0
// sdk-socket: what both directions of a connection share. The control
// socket (headers one way, clear-to-sends the other) is driven by whoever
// calls into the comm; the data sockets by helper threads, or by the caller
// when the comm has none.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "closing_sockets.hpp"
#include "config.hpp"
#include "ncclnet/socket_io.hpp"
#include "health.hpp"
#include "ncclnet/unpack.hpp"
#include "stream.hpp"
#include "stripe.hpp"

namespace ncclnet::socket {

// What both ends of one connection agreed on (the listener's values, carried
// by the handle).
struct Shape {
  int nThreads = 1;         // helper threads asked for on each end (see fitToCores)
  size_t minTaskBytes = 1;  // stripe minimum
  Patience patience;        // this end's helper retries (local: the ends need not agree)
  // This end's count of helper threads (local); shared by the plugin
  // instance's comms.
  std::shared_ptr<HelperCensus> census;
  // Both ends use the automatic thread count: this end may start fewer
  // helper threads than nThreads when the plugin instance already runs
  // many (local: the ends need only agree on sockets).
  bool fitToCores = false;
  // Where a sending end's control socket goes when the comm closes (null,
  // and always for a receiving end: it closes at once).
  std::shared_ptr<ClosingSockets> closing;
};

// Where the bytes of one message go: the buffer NCCL gave (contiguous), or
// the bounce pages of an UNPACK receive.
struct Landing {
  char* flat = nullptr;
  const unpack::Receiver* receiver = nullptr;
  const unpack::Pages* pages = nullptr;
  size_t size = 0;

  // The address of byte `offset` and how many bytes are contiguous there.
  char* at(size_t offset, size_t* run) const {
    if (receiver == nullptr) {
      *run = size - offset;
      return flat + offset;
    }
    *run = receiver->runAt(*pages, offset, size);
    return receiver->hostAt(*pages, offset);
  }
};

class ConnectionSockets {
 public:
  // `data` holds one socket per stream, in stream order.
  ConnectionSockets(Fd control, std::vector<Fd> data, Shape shape, bool sending, Logger log,
                    std::string what);
  ~ConnectionSockets();  // helper threads stop before the sockets close
  ConnectionSockets(const ConnectionSockets&) = delete;
  ConnectionSockets& operator=(const ConnectionSockets&) = delete;

  Health& health() { return health_; }
  std::mutex& mutex() { return mutex_; }
  int controlFd() const { return control_.get(); }

  // Control plane; callers hold mutex().
  void queueControl(const void* bytes, size_t size);
  // Queues `size` bytes that are not copied: they go out from `bytes`, which
  // must stay valid until controlSent() reaches controlQueued() as it is
  // after this call (a send's inline payload: NCCL keeps the buffer until
  // test() reports the send done).
  void queueControlInPlace(const void* bytes, size_t size);
  // Control bytes queued and handed to the kernel since the comm opened.
  uint64_t controlQueued() const { return txQueuedTotal_; }
  uint64_t controlSent() const { return txSentTotal_; }
  void flushControl();
  // Appends what the control socket holds to the receive buffer. A closed
  // socket fails a sending comm. A receiving comm only notes it
  // (peerClosed()): the sender may close once its sends are done, and the
  // messages it already sent must still reach the receives posted for them.
  void fillControl();
  // Receiving end: the sender closed (or reset) the control socket. Control
  // bytes queued for it are dropped from then on.
  bool peerClosed() const { return peerClosed_; }

  // With the receive buffer empty: reads up to `size` control bytes straight
  // into `at` (a large inline payload skips the copy out of the buffer).
  // Returns the count read, 0 when the socket is empty or failed.
  size_t readControlInto(char* at, size_t size);
  const uint8_t* rxData() const { return rx_.data() + rxHead_; }
  size_t rxSize() const { return rxTail_ - rxHead_; }
  void consume(size_t size) { rxHead_ += size; }

  // Cuts a message into stripes, queues them on the data sockets (a stripe
  // over several runs of bounce pages as one task per run), and adds the
  // task count to `pending`. Both ends call it in the same message order,
  // so the stripes line up.
  void queueStripes(const Landing& landing, Pending* pending);

  // Without helper threads: moves data on every data socket from the
  // calling thread, without blocking. With helpers: nothing (they own the
  // sockets).
  void driveStreams();

  // Whether a request whose header is settled can finish without the
  // caller: helper threads move its stripes and no control bytes wait to
  // be sent.
  bool progressesWithoutCaller() const { return !workers_.empty() && txRanges_.empty(); }

  // The helper threads this comm started: the agreed count, or half of it
  // when the process's helpers already filled its cores.
  int helperThreads() const { return static_cast<int>(workers_.size()); }

 private:
  Shape shape_;
  Health health_;
  std::mutex mutex_;
  Fd control_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::unique_ptr<Worker>> workers_;
  int nextStream_ = 0;
  std::vector<Stripe> plan_;
  struct Piece {
    int stream;
    char* at;
    size_t size;
  };
  std::vector<Piece> pieces_;  // queueStripes' scratch
  // Control bytes to send, in order: ranges of tx_ (copied: headers and
  // clear-to-sends) and ranges outside it (inline payloads, in place). A
  // range of tx_ is an offset, since tx_ may move as it grows; tx_ is
  // emptied once every range has gone.
  struct TxRange {
    const uint8_t* outside;  // nullptr: the range lies in tx_ at `offset`
    size_t offset;
    size_t size;
  };
  std::vector<uint8_t> tx_;
  std::deque<TxRange> txRanges_;
  size_t txFrontSent_ = 0;  // bytes of txRanges_.front() already sent
  uint64_t txQueuedTotal_ = 0;
  uint64_t txSentTotal_ = 0;
  std::vector<uint8_t> rx_;
  size_t rxHead_ = 0;
  size_t rxTail_ = 0;
  bool receiving_;
  bool peerClosed_ = false;

  // What a closed or reset control socket means for this end (see
  // fillControl).
  void onControlClosed(const char* call);
  void dropControlQueue();
};

}  // namespace ncclnet::socket
