// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: the collComm's I/O thread.
#include "engine.hpp"
#include "ncclnet/thread_name.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <exception>

#include "ncclnet/abi/common.h"

namespace ncclnet::socket::rma {

namespace {

constexpr size_t kScratchBytes = 64 << 10;
// A payload for GPU memory goes to the GPU in pieces of at most this.
constexpr size_t kStageBytes = 1 << 20;
// The thread looks at the stop flag at least this often.
constexpr int kPollMs = 100;

const char* opName(Op op) {
  switch (op) {
    case Op::kPut: return "put";
    case Op::kGet: return "get";
    case Op::kGetReply: return "get reply";
    case Op::kNack: return "refusal";
    case Op::kBye: return "goodbye";
  }
  return "frame";
}

}  // namespace

Engine::Engine(std::vector<Fd> peers, int rank, const Regions& regions, DeviceLink& link,
               int registrationWaitMs, StickyError& error, const Logger& log)
    : rank_(rank),
      regions_(regions),
      link_(link),
      registrationWaitMs_(registrationWaitMs),
      error_(error),
      log_(log),
      scratch_(kScratchBytes) {
  for (Fd& fd : peers) {
    peers_.push_back(std::make_unique<Peer>());
    peers_.back()->fd = std::move(fd);
  }
}

Engine::~Engine() {
  close(0);
}

ncclResult_t Engine::start() {
  wake_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_.valid()) {
    NCCLNET_WARN(log_, "connect: eventfd failed: %s", std::strerror(errno));
    return ncclSystemError;
  }
  try {
    thread_ = std::thread([this] {
      nameThisThread("sdk-socket rma");
      run();
    });
  } catch (const std::system_error& e) {
    NCCLNET_WARN(log_, "connect: cannot start the RMA thread: %s", e.what());
    return ncclSystemError;
  }
  return ncclSuccess;
}

void Engine::wake() {
  uint64_t one = 1;
  ssize_t n = ::write(wake_.get(), &one, sizeof(one));
  (void)n;  // a full counter still wakes the thread
}

void Engine::queue(int rank, Peer& peer, Outgoing out) {
  (void)rank;
  peer.queue.push_back(out);
  peer.unsent.fetch_add(1, std::memory_order_relaxed);
}

ncclResult_t Engine::post(int rank, const Frame& frame, const uint8_t* payload, size_t size,
                          Request* done, Staged staged) {
  if (!error_.ok()) return error_.code();
  Peer& peer = *peers_[rank];
  if (peer.gone.load(std::memory_order_acquire)) {
    return error_.fail(log_, nullptr, Failure::kPeerGone, "rank %d has closed its RMA connection",
                       rank);
  }
  Outgoing out;
  encodeFrame(frame, out.header);
  out.payload = payload;
  out.size = size;
  out.done = done;
  out.staged = std::move(staged);
  {
    std::lock_guard<std::mutex> lock(peer.mutex);
    queue(rank, peer, out);
  }
  wake();
  return ncclSuccess;
}

ncclResult_t Engine::postGet(int rank, Frame frame, uint8_t* dest, bool deviceDest, Request* done) {
  if (!error_.ok()) return error_.code();
  Peer& peer = *peers_[rank];
  if (peer.gone.load(std::memory_order_acquire)) {
    return error_.fail(log_, nullptr, Failure::kPeerGone, "rank %d has closed its RMA connection",
                       rank);
  }
  {
    // The tag, the pending entry and the frame's place in the queue are
    // taken together: the replies come back in queue order.
    std::lock_guard<std::mutex> lock(peer.mutex);
    frame.tag = peer.nextTag++;
    peer.gets.push_back(PendingGet{frame.tag, dest, deviceDest, frame.size, done});
    peer.getsIssued.fetch_add(1, std::memory_order_release);
    Outgoing out;
    encodeFrame(frame, out.header);
    queue(rank, peer, out);
  }
  wake();
  return ncclSuccess;
}

std::vector<uint64_t> Engine::getTargets(int rank) const {
  std::vector<uint64_t> targets(peers_.size(), 0);
  bool any = false;
  for (size_t r = 0; r < peers_.size(); r++) {
    if (rank != rank_ && static_cast<int>(r) != rank) continue;
    targets[r] = peers_[r]->getsIssued.load(std::memory_order_acquire);
    any |= targets[r] > peers_[r]->getsLanded.load(std::memory_order_acquire);
  }
  if (!any) targets.clear();
  return targets;
}

bool Engine::landed(const std::vector<uint64_t>& targets) const {
  for (size_t r = 0; r < targets.size() && r < peers_.size(); r++) {
    if (peers_[r]->getsLanded.load(std::memory_order_acquire) < targets[r]) return false;
  }
  return true;
}

void Engine::close(int timeoutMs) {
  if (!thread_.joinable()) return;
  if (!closing_.exchange(true)) {
    // Goodbye tells each peer that the end of this stream is no failure;
    // also after this comm failed, as its peers may be fine.
    Frame bye;
    bye.op = Op::kBye;
    for (size_t r = 0; r < peers_.size(); r++) {
      Peer& peer = *peers_[r];
      if (static_cast<int>(r) == rank_ || peer.dead.load() || peer.gone.load()) continue;
      Outgoing out;
      encodeFrame(bye, out.header);
      std::lock_guard<std::mutex> lock(peer.mutex);
      queue(static_cast<int>(r), peer, out);
    }
    wake();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    auto flushed = [this] {
      for (const auto& peer : peers_) {
        if (!peer->dead.load() && peer->unsent.load() > 0) return false;
      }
      return true;
    };
    while (!flushed() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  stop_.store(true);
  wake();
  regions_.interruptWaits();
  thread_.join();
}

// A stream broke: the comm fails for good (one WARN line for all its
// requests: StickyError logs only the first failure). During close the
// peers may go first; that is no failure.
void Engine::lost(int rank, const char* what) {
  Peer& peer = *peers_[rank];
  peer.gone.store(true, std::memory_order_release);
  if (closing_.load()) return;
  error_.fail(log_, nullptr, Failure::kPeerGone, "the RMA connection to rank %d broke (%s)", rank,
              what);
}

void Engine::run() {
  try {
    loop();
  } catch (const std::exception& e) {  // bad_alloc: the comm fails, the process lives
    error_.fail(log_, nullptr, Failure::kInternal, "RMA thread: %s", e.what());
  }
}

void Engine::loop() {
  std::vector<pollfd> fds;
  std::vector<int> ranks;
  while (!stop_.load(std::memory_order_acquire)) {
    fds.assign(1, pollfd{wake_.get(), POLLIN, 0});
    ranks.assign(1, -1);
    for (size_t r = 0; r < peers_.size(); r++) {
      Peer& peer = *peers_[r];
      if (!peer.fd.valid()) continue;
      bool hasWork = peer.current.has_value();
      if (!hasWork) {
        std::lock_guard<std::mutex> lock(peer.mutex);
        hasWork = !peer.queue.empty();
      }
      // A failed comm stops moving data (NCCL only tests and closes now)
      // until close sends its goodbyes.
      if (!error_.ok() && !closing_.load()) hasWork = false;
      short events = POLLIN;
      if (hasWork) events |= POLLOUT;
      fds.push_back(pollfd{peer.fd.get(), events, 0});
      ranks.push_back(static_cast<int>(r));
    }
    int n = ::poll(fds.data(), fds.size(), kPollMs);
    if (n < 0 && errno != EINTR) {
      error_.fail(log_, nullptr, Failure::kSystemCall, "RMA thread: poll failed: %s",
                  std::strerror(errno));
      return;
    }
    if (n <= 0) continue;
    if (fds[0].revents != 0) {
      uint64_t count;
      ssize_t got = ::read(wake_.get(), &count, sizeof(count));
      (void)got;  // EAGAIN: another wake already drained it
    }
    for (size_t i = 1; i < fds.size(); i++) {
      Peer& peer = *peers_[ranks[i]];
      short rev = fds[i].revents;
      if (rev == 0) continue;
      bool ok = true;
      if (rev & (POLLIN | POLLERR | POLLHUP)) ok = readSome(ranks[i], peer);
      if (ok && (rev & POLLOUT)) ok = writeSome(ranks[i], peer);
      if (!ok) {
        // Nothing more comes from or goes to this peer.
        peer.fd.reset();
        peer.dead.store(true);
      }
    }
  }
}

bool Engine::writeSome(int rank, Peer& peer) {
  for (;;) {
    if (!peer.current) {
      std::lock_guard<std::mutex> lock(peer.mutex);
      if (peer.queue.empty()) return true;
      peer.current = peer.queue.front();
      peer.queue.pop_front();
    }
    Outgoing& out = *peer.current;
    const size_t total = kFrameBytes + out.size;
    while (out.sent < total) {
      iovec ranges[2];
      int count = 0;
      if (out.sent < kFrameBytes) {
        ranges[count++] = {out.header + out.sent, kFrameBytes - out.sent};
        if (out.size > 0) ranges[count++] = {const_cast<uint8_t*>(out.payload), out.size};
      } else {
        size_t at = out.sent - kFrameBytes;
        ranges[count++] = {const_cast<uint8_t*>(out.payload) + at, out.size - at};
      }
      size_t moved = 0;
      switch (sendSomeV(peer.fd.get(), ranges, count, &moved)) {
        case Io::Moved: out.sent += moved; break;
        case Io::WouldBlock: return true;
        case Io::Closed: lost(rank, "closed while sending"); return false;
        case Io::Failed: lost(rank, std::strerror(errno)); return false;
      }
    }
    Request* done = out.done;
    peer.current.reset();
    peer.unsent.fetch_sub(1, std::memory_order_relaxed);
    if (done != nullptr) done->complete();  // the last touch: test() may free it now
  }
}

bool Engine::readSome(int rank, Peer& peer) {
  for (;;) {
    size_t moved = 0;
    Io io;
    if (!peer.inPayload) {
      io = recvSome(peer.fd.get(), peer.inHeader + peer.inGot, kFrameBytes - peer.inGot, &moved);
    } else if (peer.inDevice) {
      size_t room = peer.stage.size() - peer.staged;
      io = recvSome(peer.fd.get(), peer.stage.data() + peer.staged,
                    std::min<uint64_t>(peer.inLeft, room), &moved);
    } else {
      uint8_t* to = peer.inDest != nullptr ? peer.inDest : scratch_.data();
      size_t want =
          peer.inDest != nullptr ? peer.inLeft : std::min<uint64_t>(peer.inLeft, kScratchBytes);
      io = recvSome(peer.fd.get(), to, want, &moved);
    }
    switch (io) {
      case Io::Moved: break;
      case Io::WouldBlock: return true;
      case Io::Closed:
        if (peer.gone.load() && !peer.inPayload && peer.inGot == 0) return false;  // after goodbye
        lost(rank, "the peer closed it");
        return false;
      case Io::Failed: lost(rank, std::strerror(errno)); return false;
    }
    if (!peer.inPayload) {
      peer.inGot += moved;
      if (peer.inGot < kFrameBytes) continue;
      peer.inGot = 0;
      if (!onHeader(rank, peer)) return false;
    } else {
      peer.inLeft -= moved;
      if (peer.inDevice) {
        peer.staged += moved;
        bool full = peer.staged == peer.stage.size() || peer.inLeft == 0;
        if (full && !flushStage(peer)) return false;
      } else if (peer.inDest != nullptr) {
        peer.inDest += moved;
      }
      if (peer.inLeft == 0 && !onPayload(rank, peer)) return false;
    }
  }
}

bool Engine::onHeader(int rank, Peer& peer) {
  Frame& f = peer.in;
  if (!decodeFrame(peer.inHeader, &f)) {
    error_.fail(log_, nullptr, Failure::kPeerMisbehaved,
                "rank %d sent bytes that are not an RMA frame: the stream is lost", rank);
    return false;
  }
  peer.inDest = nullptr;
  peer.inLeft = 0;
  peer.inDevice = false;
  peer.inStatus = kOk;
  switch (f.op) {
    case Op::kPut: {
      if (f.size > 0 || f.region != kNoRegion) {
        Access a = regions_.resolveRemote(f.region, f.offset, f.size, registrationWaitMs_, stop_);
        peer.inDest = a.at;
        peer.inStatus = a.status;
        if (a.status == kOk && a.type == NCCL_PTR_CUDA) toDevice(peer, a.at, f.size);
      }
      peer.inLeft = f.size;
      break;
    }
    case Op::kGet: {
      Access a = regions_.resolveRemote(f.region, f.offset, f.size, registrationWaitMs_, stop_);
      Frame reply;
      reply.op = Op::kGetReply;
      reply.context = f.context;
      reply.tag = f.tag;
      reply.status = a.status;
      reply.size = a.status == kOk ? f.size : 0;
      if (a.status != kOk) {
        NCCLNET_WARN(log_, "rank %d asked for %lu bytes at offset %lu of registration %lu: %s",
                     rank, static_cast<unsigned long>(f.size), static_cast<unsigned long>(f.offset),
                     static_cast<unsigned long>(f.region), statusText(a.status));
      }
      Outgoing out;
      if (a.status == kOk && a.type == NCCL_PTR_CUDA && reply.size > 0) {
        // GPU memory is read now, into a copy the reply owns.
        auto copy = std::make_shared<std::vector<uint8_t>>(reply.size);
        std::string why;
        if (!link_.toHost(copy->data(), a.at, reply.size, &why)) {
          error_.fail(log_, nullptr, Failure::kSystemCall,
                      "cannot read GPU memory for rank %d's get: %s", rank, why.c_str());
          return false;
        }
        out.staged = copy;
        a.at = copy->data();
      }
      encodeFrame(reply, out.header);
      out.payload = a.at;  // read when the reply is written: the region is live until dereg
      out.size = reply.size;
      {
        std::lock_guard<std::mutex> lock(peer.mutex);
        queue(rank, peer, out);
      }
      return true;
    }
    case Op::kGetReply: {
      PendingGet get{};
      {
        std::lock_guard<std::mutex> lock(peer.mutex);
        if (!peer.gets.empty()) {
          get = peer.gets.front();
          peer.gets.pop_front();
        } else {
          get.done = nullptr;
        }
      }
      if (get.done == nullptr || get.tag != f.tag || (f.status == kOk && f.size != get.size)) {
        error_.fail(log_, nullptr, Failure::kPeerMisbehaved,
                    "rank %d answered a get this rank did not ask for", rank);
        return false;
      }
      if (f.status != kOk) {
        error_.fail(log_, nullptr, Failure::kInvalidUsage, "rank %d refused a get of %lu bytes: %s",
                    rank, static_cast<unsigned long>(get.size), statusText(f.status));
        get.done->fail();
        peer.getsLanded.fetch_add(1, std::memory_order_release);
        return true;
      }
      peer.pendingGet = get;
      peer.inDest = get.dest;
      peer.inLeft = f.size;
      if (get.deviceDest && f.size > 0) toDevice(peer, get.dest, f.size);
      break;
    }
    case Op::kNack:
      error_.fail(log_, nullptr, Failure::kInvalidUsage,
                  "rank %d refused a put of %lu bytes at offset %lu of registration %lu: %s", rank,
                  static_cast<unsigned long>(f.size), static_cast<unsigned long>(f.offset),
                  static_cast<unsigned long>(f.region), statusText(f.status));
      return true;
    case Op::kBye: peer.gone.store(true, std::memory_order_release); return true;
  }
  if (peer.inLeft > 0) {
    peer.inPayload = true;
    return true;
  }
  return onPayload(rank, peer);
}

bool Engine::onPayload(int rank, Peer& peer) {
  peer.inPayload = false;
  const Frame& f = peer.in;
  if (f.op == Op::kGetReply) {
    Request* done = peer.pendingGet.done;
    peer.getsLanded.fetch_add(1, std::memory_order_release);
    done->complete();
    return true;
  }
  // A put: the payload is in place (or was refused); now its signal, never
  // before the payload and never for a refused one.
  uint8_t status = peer.inStatus;
  if (status == kOk && f.signalRegion != kNoRegion) {
    Access a = regions_.resolveRemote(f.signalRegion, f.signalOffset, sizeof(uint64_t),
                                      registrationWaitMs_, stop_);
    if (a.status != kOk || reinterpret_cast<uintptr_t>(a.at) % alignof(uint64_t) != 0) {
      status = kBadSignal;
    } else if (!addSignal(a, f.signalValue)) {
      return false;
    }
  }
  if (status == kOk) return true;
  Frame nack = f;
  nack.op = Op::kNack;
  nack.status = status;
  if (status == kBadSignal) {
    nack.region = f.signalRegion;
    nack.offset = f.signalOffset;
    nack.size = sizeof(uint64_t);
  }
  NCCLNET_WARN(log_, "refused rank %d's %s of %lu bytes at offset %lu of registration %lu: %s",
               rank, opName(f.op), static_cast<unsigned long>(nack.size),
               static_cast<unsigned long>(nack.offset), static_cast<unsigned long>(nack.region),
               statusText(status));
  Outgoing out;
  encodeFrame(nack, out.header);
  std::lock_guard<std::mutex> lock(peer.mutex);
  queue(rank, peer, out);
  return true;
}

void Engine::toDevice(Peer& peer, uint8_t* at, uint64_t size) {
  peer.inDevice = true;
  peer.deviceAt = at;
  peer.staged = 0;
  peer.stage.resize(std::min<uint64_t>(size, kStageBytes));
}

bool Engine::flushStage(Peer& peer) {
  std::string why;
  if (!link_.toDevice(peer.deviceAt, peer.stage.data(), peer.staged, &why)) {
    error_.fail(log_, nullptr, Failure::kSystemCall, "cannot write GPU memory: %s", why.c_str());
    return false;
  }
  peer.deviceAt += peer.staged;
  peer.staged = 0;
  return true;
}

bool Engine::addSignal(const Access& word, uint64_t value) {
  std::string why;
  if (link_.add(word.at, word.type, value, &why)) return true;
  error_.fail(log_, nullptr, Failure::kSystemCall, "cannot add a signal: %s", why.c_str());
  return false;
}

}  // namespace ncclnet::socket::rma
