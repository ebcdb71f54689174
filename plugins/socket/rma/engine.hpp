// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: the data path of one collComm. One thread per collComm
// owns every socket of the mesh: it writes each peer's queue of frames in
// order and reads each peer's stream in order, writing payloads into the
// target's registrations and applying signals after their payload. That
// gives the rules of NCCL's proxy contract for free:
//  - strong signals: everything on one (context, peer) is one FIFO on one
//    TCP stream, applied in order by one thread, so a signal lands after
//    every earlier put of that context to that rank (and of every other
//    context: more than promised, never less);
//  - signals are atomic with respect to each other: this thread applies
//    all remote ones, with an atomic add because the rank's own signals
//    (carried out in its caller's thread) land on the same words;
//  - GPU memory goes through device_link.hpp: a payload for a CUDA region
//    arrives in a host staging buffer and is copied to the GPU, chunk by
//    chunk, before its signal is added there.
// NCCL may never call progress (the GIN v11 proxy does not need it), so
// the thread moves everything; test() only reads states.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "device_link.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/socket_io.hpp"
#include "ncclnet/sticky_error.hpp"
#include "regions.hpp"
#include "requests.hpp"
#include "wire.hpp"

namespace ncclnet::socket::rma {

class Engine {
 public:
  // `peers`: one connected socket per rank but `rank` (mesh.hpp). A frame
  // for a region this rank has not registered yet waits up to
  // `registrationWaitMs` for it (regions.hpp resolveRemote).
  Engine(std::vector<Fd> peers, int rank, const Regions& regions, DeviceLink& link,
         int registrationWaitMs, StickyError& error, const Logger& log);
  ~Engine();  // stop(0) if close() was not called
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  ncclResult_t start();

  // Bytes staged in host memory, kept alive until they are sent.
  using Staged = std::shared_ptr<const std::vector<uint8_t>>;

  // Queues `frame` and `size` bytes read from `payload` when the frame goes
  // out; `done` (may be null) completes once all of it is in the kernel's
  // socket buffer, so the source may be reused. `staged`, when given, owns
  // the payload.
  ncclResult_t post(int peer, const Frame& frame, const uint8_t* payload, size_t size,
                    Request* done, Staged staged = nullptr);
  // Queues a kGet; `done` completes once the reply's bytes are in `dest`
  // (GPU memory when `deviceDest`).
  ncclResult_t postGet(int peer, Frame frame, uint8_t* dest, bool deviceDest, Request* done);

  // The gets a flush must wait for: the count issued so far to `peer`, or
  // to every peer when `peer` is this rank (NCCL's flush names a rank,
  // gin_host_proxy.cc proxyGinProcessGfd; one naming itself is taken to
  // mean every get of the context). Empty when none is outstanding.
  std::vector<uint64_t> getTargets(int peer) const;
  bool landed(const std::vector<uint64_t>& targets) const;

  // Says goodbye to every peer and gives the queued frames up to
  // `timeoutMs` to leave, then stops the thread. Never waits for a peer's
  // own progress beyond that (aws-ofi-nccl PRs #1275/#1281: a closeColl
  // that waits for its peers deadlocks teardown).
  void close(int timeoutMs);

 private:
  struct Outgoing {
    uint8_t header[kFrameBytes];
    const uint8_t* payload = nullptr;
    size_t size = 0;
    size_t sent = 0;  // of header + payload
    Request* done = nullptr;
    Staged staged;
  };
  struct PendingGet {
    uint64_t tag;
    uint8_t* dest;
    bool deviceDest;
    uint64_t size;
    Request* done;
  };
  struct Peer {
    Fd fd;
    std::mutex mutex;  // queue, gets, tag: posted from NCCL's threads
    std::deque<Outgoing> queue;
    std::deque<PendingGet> gets;  // answered in order
    uint64_t nextTag = 0;
    std::atomic<uint64_t> getsIssued{0};
    std::atomic<uint64_t> getsLanded{0};
    std::atomic<bool> gone{false};   // said goodbye, or its stream ended
    std::atomic<bool> dead{false};   // its socket is closed: nothing more moves
    std::atomic<int64_t> unsent{0};  // frames queued and not yet written
    // Engine thread only.
    std::optional<Outgoing> current;
    uint8_t inHeader[kFrameBytes];
    size_t inGot = 0;
    Frame in;
    uint8_t* inDest = nullptr;  // null: the payload is discarded
    uint64_t inLeft = 0;
    // A payload for GPU memory: read into `stage`, copied to `deviceAt`
    // whenever the stage is full or the payload complete.
    bool inDevice = false;
    uint8_t* deviceAt = nullptr;
    std::vector<uint8_t> stage;
    size_t staged = 0;
    bool inPayload = false;
    uint8_t inStatus = kOk;
    PendingGet pendingGet{};  // the get whose reply payload is arriving
  };

  void run();
  void loop();
  bool writeSome(int rank, Peer& peer);  // false: the peer's stream failed
  bool readSome(int rank, Peer& peer);
  bool onHeader(int rank, Peer& peer);                    // a frame header has arrived
  bool onPayload(int rank, Peer& peer);                   // its payload has arrived
  void toDevice(Peer& peer, uint8_t* at, uint64_t size);  // the payload goes to the GPU
  bool flushStage(Peer& peer);
  bool addSignal(const Access& word, uint64_t value);
  void queue(int rank, Peer& peer, Outgoing out);
  void lost(int rank, const char* what);
  void wake();

  std::vector<std::unique_ptr<Peer>> peers_;
  int rank_;
  const Regions& regions_;
  DeviceLink& link_;
  int registrationWaitMs_;
  StickyError& error_;
  Logger log_;
  Fd wake_;  // an eventfd: NCCL's threads queued something, or stop
  std::atomic<bool> stop_{false};
  std::atomic<bool> closing_{false};
  std::thread thread_;
  std::vector<uint8_t> scratch_;  // where refused payloads are read to
};

}  // namespace ncclnet::socket::rma
