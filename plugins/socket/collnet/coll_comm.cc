// SPDX-License-Identifier: Apache-2.0
// sdk-socket CollNet: the operations of one collComm and the thread that
// moves them (coll_comm.hpp says how).
#include "coll_comm.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

#include "ncclnet/thread_name.hpp"
#include "reduce.hpp"

namespace ncclnet::socket::collnet {

namespace {

// The thread looks at its stop flag at least this often.
constexpr int kPollMs = 100;
// Bytes moved to or from one peer before the thread turns to the next, so
// one large operation does not starve the other peers' streams.
constexpr size_t kBudgetBytes = 4 << 20;
constexpr int kMaxIov = 8;

// The part of rank r's block [r*bpr, (r+1)*bpr) inside the window
// [offset, offset+bytes) of the logical nranks*bpr buffer; empty (lo == hi)
// when they do not meet.
struct Range {
  size_t lo = 0;
  size_t hi = 0;
  size_t size() const { return hi - lo; }
};
Range blockInWindow(int r, size_t bytesPerRank, size_t offset, size_t bytes) {
  size_t begin = static_cast<size_t>(r) * bytesPerRank;
  Range range;
  range.lo = std::max(offset, begin);
  range.hi = std::min(offset + bytes, begin + bytesPerRank);
  if (range.hi < range.lo) range.hi = range.lo;
  return range;
}

// Bytes [from, from+len) of the concatenation of `parts`; false when the
// parts are shorter.
bool sliceParts(const ncclNetSGE_v12_t* parts, int nparts, size_t from, size_t len,
                std::vector<Segment>* out) {
  for (int i = 0; i < nparts && len > 0; i++) {
    size_t size = parts[i].size;
    if (from >= size) {
      from -= size;
      continue;
    }
    size_t take = std::min(size - from, len);
    out->push_back(Segment{static_cast<uint8_t*>(parts[i].address) + from, take});
    len -= take;
    from = 0;
  }
  return len == 0;
}

size_t totalOf(const std::vector<Segment>& segments) {
  size_t total = 0;
  for (const Segment& s : segments) total += s.size;
  return total;
}

// Moves a (segment, offset) cursor `moved` bytes on, past empty segments.
void advance(const std::vector<Segment>& segments, size_t* segment, size_t* offset, size_t moved) {
  while (*segment < segments.size()) {
    size_t left = segments[*segment].size - *offset;
    if (moved < left) {
      *offset += moved;
      return;
    }
    moved -= left;
    ++*segment;
    *offset = 0;
  }
}

}  // namespace

void Operation::clear() {
  sends.clear();
  recvs.clear();
  recvBytes.clear();
  headers.clear();
  staging.clear();
  sources.clear();
  reduceCount = 0;
  reduceDst = nullptr;
  size = 0;
}

CollComm::CollComm(int rank, int nranks, const Logger& log)
    : rank_(rank), nranks_(nranks), log_(log), ops_(new Operation[kMaxInFlight]) {
  free_.reserve(kMaxInFlight);
  for (int i = kMaxInFlight - 1; i >= 0; i--) {
    ops_[i].comm = this;
    free_.push_back(&ops_[i]);
  }
}

CollComm::~CollComm() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) {
    wake();
    thread_.join();
  }
  // The mesh closes with peers_: a peer still in an operation with this
  // rank sees its stream end and fails that operation.
}

ncclResult_t CollComm::prepare() {
  peers_.resize(nranks_);
  wake_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_.valid()) {
    NCCLNET_WARN(log_, "connect: eventfd failed: %s", std::strerror(errno));
    return resultOf(Failure::kSystemCall);
  }
  try {
    thread_ = std::thread([this] {
      nameThisThread("sdk-socket coll");
      run();
    });
  } catch (const std::system_error& e) {
    NCCLNET_WARN(log_, "connect: cannot start the CollNet thread: %s", e.what());
    return resultOf(Failure::kSystemCall);
  }
  return ncclSuccess;
}

void CollComm::attach(std::vector<Fd> peers) {
  for (int r = 0; r < nranks_; r++) {
    if (r != rank_) peers_[r].fd = std::move(peers[r]);
  }
  attached_.store(true, std::memory_order_release);
  wake();
}

void CollComm::wake() {
  uint64_t one = 1;
  ssize_t n = ::write(wake_.get(), &one, sizeof(one));
  (void)n;  // a full counter still wakes the thread
}

void* CollComm::addRegistration(void* data, size_t size) {
  auto reg = std::make_unique<Registration>(Registration{data, size});
  void* handle = reg.get();
  std::lock_guard<std::mutex> lock(mutex_);
  registrations_.emplace(handle, std::move(reg));
  return handle;
}

bool CollComm::removeRegistration(void* mhandle) {
  std::lock_guard<std::mutex> lock(mutex_);
  return registrations_.erase(mhandle) == 1;
}

Operation* CollComm::claim() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) return nullptr;
  Operation* op = free_.back();
  free_.pop_back();
  // Every vector is per rank; the header is the first range sent to each peer.
  op->sends.assign(nranks_, {});
  op->recvs.assign(nranks_, {});
  op->recvBytes.assign(nranks_, 0);
  op->headers.assign(nranks_, {});
  op->staging.assign(nranks_, {});
  op->sources.assign(nranks_, nullptr);
  for (int p = 0; p < nranks_; p++) {
    if (p == rank_) continue;
    op->headers[p].resize(kHeaderBytes);
    op->sends[p].push_back(Segment{op->headers[p].data(), kHeaderBytes});
  }
  return op;
}

void CollComm::release(Operation* op) {
  op->clear();
  op->state.store(Operation::kFree, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(op);
}

ncclResult_t CollComm::publish(Operation* op, const char* fn, void** request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    op->seq = nextSeq_++;
    for (int p = 0; p < nranks_; p++) {
      if (p == rank_) continue;
      Header h{op->kind, op->seq, totalOf(op->sends[p]) - kHeaderBytes};
      encodeHeader(h, op->headers[p].data());
    }
    op->state.store(Operation::kActive, std::memory_order_release);
    active_.push_back(op);
  }
  wake();
  NCCLNET_INFO(log_, NCCL_NET, "%s #%lu posted: %d bytes for this rank", fn,
               static_cast<unsigned long>(op->seq), op->size);
  *request = op;
  return ncclSuccess;
}

ncclResult_t CollComm::allReduce(void* sendData, void* recvData, size_t count, ncclDataType_t type,
                                 ncclRedOp_t redOp, size_t maxBytes, void** request) {
  if (!error_.ok()) return error_.code();
  if (!reduceSupported(type, redOp)) {
    NCCLNET_WARN(log_, "iallreduce: data type %d with operation %d is not supported here",
                 static_cast<int>(type), static_cast<int>(redOp));
    return resultOf(Failure::kBadArgument);
  }
  const size_t elt = elementSize(type);
  if (count > maxBytes / elt) {
    NCCLNET_WARN(log_, "iallreduce: %zu elements of %zu bytes exceed maxCollBytes (%zu)", count,
                 elt, maxBytes);
    return resultOf(Failure::kBadArgument);
  }
  const size_t bytes = count * elt;
  if (bytes > 0 && (sendData == nullptr || recvData == nullptr)) {
    NCCLNET_WARN(log_, "iallreduce: NULL buffer (send %p, recv %p) for %zu bytes", sendData,
                 recvData, bytes);
    return resultOf(Failure::kBadArgument);
  }
  Operation* op = claim();
  if (op == nullptr) {
    *request = nullptr;  // NCCL retries (coll_net.cc sendProxyProgress)
    return ncclSuccess;
  }
  op->kind = Kind::kAllReduce;
  op->type = type;
  op->op = redOp;
  op->reduceCount = count;
  op->reduceDst = static_cast<uint8_t*>(recvData);
  op->size = static_cast<int>(bytes);
  try {
    for (int p = 0; p < nranks_; p++) {
      if (p == rank_) continue;
      op->sends[p].push_back(Segment{static_cast<uint8_t*>(sendData), bytes});
      op->staging[p].resize(bytes);
      op->recvs[p].push_back(Segment{op->staging[p].data(), bytes});
      op->recvBytes[p] = bytes;
      op->sources[p] = op->staging[p].data();
    }
  } catch (const std::bad_alloc&) {
    release(op);
    NCCLNET_WARN(log_, "iallreduce: no memory to stage %d peers' %zu bytes", nranks_ - 1, bytes);
    return resultOf(Failure::kOutOfMemory);
  }
  // In place (sendData == recvData) is safe: the fold writes recvData only
  // once every peer has been sent all of sendData.
  op->sources[rank_] = sendData;
  return publish(op, "iallreduce", request);
}

namespace {

// The checks iallgather and ireducescatter share: the window lies in the
// logical buffer, fits maxCollBytes, and the parts cover it.
bool windowValid(const Logger& log, const char* fn, int nranks, int nparts,
                 const ncclNetSGE_v12_t* parts, size_t bytesPerRank, size_t windowOffset,
                 size_t windowBytes, size_t maxBytes) {
  if (bytesPerRank > SIZE_MAX / static_cast<size_t>(nranks)) {
    NCCLNET_WARN(log, "%s: %zu bytes per rank overflow the logical buffer", fn, bytesPerRank);
    return false;
  }
  const size_t total = bytesPerRank * static_cast<size_t>(nranks);
  if (windowOffset > total || windowBytes > total - windowOffset) {
    NCCLNET_WARN(log, "%s: window [%zu, +%zu) leaves the %zu-byte logical buffer", fn, windowOffset,
                 windowBytes, total);
    return false;
  }
  if (windowBytes > maxBytes) {
    NCCLNET_WARN(log, "%s: window of %zu bytes exceeds maxCollBytes (%zu)", fn, windowBytes,
                 maxBytes);
    return false;
  }
  if (windowBytes > 0 && (nparts < 1 || parts == nullptr)) {
    NCCLNET_WARN(log, "%s: %d parts at %p for a window of %zu bytes", fn, nparts,
                 static_cast<const void*>(parts), windowBytes);
    return false;
  }
  std::vector<Segment> all;
  if (!sliceParts(parts, nparts, 0, windowBytes, &all)) {
    NCCLNET_WARN(log, "%s: the %d parts hold less than the window's %zu bytes", fn, nparts,
                 windowBytes);
    return false;
  }
  for (const Segment& s : all) {
    if (s.at == nullptr) {
      NCCLNET_WARN(log, "%s: a part of %zu bytes has a NULL address", fn, s.size);
      return false;
    }
  }
  return true;
}

}  // namespace

ncclResult_t CollComm::allGather(void* sendData, int nRecvParts, const ncclNetSGE_v12_t* recvParts,
                                 size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                 size_t maxBytes, void** request) {
  if (!error_.ok()) return error_.code();
  if (!windowValid(log_, "iallgather", nranks_, nRecvParts, recvParts, bytesPerRank, windowOffset,
                   windowBytes, maxBytes)) {
    return resultOf(Failure::kBadArgument);
  }
  const Range mine = blockInWindow(rank_, bytesPerRank, windowOffset, windowBytes);
  if (mine.size() > 0 && sendData == nullptr) {
    NCCLNET_WARN(log_, "iallgather: NULL sendData for %zu bytes of this rank's block", mine.size());
    return resultOf(Failure::kBadArgument);
  }
  Operation* op = claim();
  if (op == nullptr) {
    *request = nullptr;
    return ncclSuccess;
  }
  op->kind = Kind::kAllGather;
  op->size = static_cast<int>(windowBytes);
  auto* own = static_cast<uint8_t*>(sendData);
  try {
    for (int p = 0; p < nranks_; p++) {
      if (p == rank_) continue;
      if (mine.size() > 0) op->sends[p].push_back(Segment{own, mine.size()});
      Range theirs = blockInWindow(p, bytesPerRank, windowOffset, windowBytes);
      sliceParts(recvParts, nRecvParts, theirs.lo - windowOffset, theirs.size(), &op->recvs[p]);
      op->recvBytes[p] = theirs.size();
    }
    // This rank's own part of the window needs no wire. memmove: NCCL's
    // in-place all-gather hands sendData at its own place in the result.
    std::vector<Segment> dest;
    sliceParts(recvParts, nRecvParts, mine.lo - windowOffset, mine.size(), &dest);
    size_t from = 0;
    for (const Segment& s : dest) {
      std::memmove(s.at, own + from, s.size);
      from += s.size;
    }
  } catch (const std::bad_alloc&) {
    release(op);
    NCCLNET_WARN(log_, "iallgather: out of memory");
    return resultOf(Failure::kOutOfMemory);
  }
  return publish(op, "iallgather", request);
}

ncclResult_t CollComm::reduceScatter(int nSendParts, const ncclNetSGE_v12_t* sendParts,
                                     void* recvData, size_t bytesPerRank, size_t windowOffset,
                                     size_t windowBytes, ncclDataType_t type, ncclRedOp_t redOp,
                                     size_t maxBytes, void** request) {
  if (!error_.ok()) return error_.code();
  if (!reduceSupported(type, redOp)) {
    NCCLNET_WARN(log_, "ireducescatter: data type %d with operation %d is not supported here",
                 static_cast<int>(type), static_cast<int>(redOp));
    return resultOf(Failure::kBadArgument);
  }
  if (!windowValid(log_, "ireducescatter", nranks_, nSendParts, sendParts, bytesPerRank,
                   windowOffset, windowBytes, maxBytes)) {
    return resultOf(Failure::kBadArgument);
  }
  // Whole elements everywhere, so every rank's share of the window is too.
  const size_t elt = elementSize(type);
  if (bytesPerRank % elt != 0 || windowOffset % elt != 0 || windowBytes % elt != 0) {
    NCCLNET_WARN(log_,
                 "ireducescatter: %zu bytes per rank, window [%zu, +%zu): not whole %zu-byte "
                 "elements",
                 bytesPerRank, windowOffset, windowBytes, elt);
    return resultOf(Failure::kBadArgument);
  }
  const Range mine = blockInWindow(rank_, bytesPerRank, windowOffset, windowBytes);
  if (mine.size() > 0 && recvData == nullptr) {
    NCCLNET_WARN(log_, "ireducescatter: NULL recvData for %zu bytes", mine.size());
    return resultOf(Failure::kBadArgument);
  }
  Operation* op = claim();
  if (op == nullptr) {
    *request = nullptr;
    return ncclSuccess;
  }
  op->kind = Kind::kReduceScatter;
  op->type = type;
  op->op = redOp;
  op->reduceCount = mine.size() / elt;
  op->reduceDst = static_cast<uint8_t*>(recvData);
  op->size = static_cast<int>(mine.size());
  try {
    for (int p = 0; p < nranks_; p++) {
      op->staging[p].resize(mine.size());
      op->sources[p] = op->staging[p].data();
      if (p == rank_) continue;
      Range theirs = blockInWindow(p, bytesPerRank, windowOffset, windowBytes);
      sliceParts(sendParts, nSendParts, theirs.lo - windowOffset, theirs.size(), &op->sends[p]);
      op->recvs[p].push_back(Segment{op->staging[p].data(), mine.size()});
      op->recvBytes[p] = mine.size();
    }
    // This rank's own contribution, gathered now: recvData may lie inside
    // the send parts (in-place), and the fold reads every operand of an
    // element before it writes the element.
    std::vector<Segment> own;
    sliceParts(sendParts, nSendParts, mine.lo - windowOffset, mine.size(), &own);
    size_t at = 0;
    for (const Segment& s : own) {
      std::memcpy(op->staging[rank_].data() + at, s.at, s.size);
      at += s.size;
    }
  } catch (const std::bad_alloc&) {
    release(op);
    NCCLNET_WARN(log_, "ireducescatter: no memory to stage %d ranks' %zu bytes", nranks_,
                 mine.size());
    return resultOf(Failure::kOutOfMemory);
  }
  return publish(op, "ireducescatter", request);
}

ncclResult_t CollComm::test(Operation* op, int* done, int* size) {
  int state = op->state.load(std::memory_order_acquire);
  if (state == Operation::kDone) {
    *done = 1;
    if (size != nullptr) *size = op->size;
    release(op);
    return ncclSuccess;
  }
  if (state != Operation::kActive) {
    NCCLNET_WARN(log_, "test: request %p is not in flight (tested after it completed?)",
                 static_cast<void*>(op));
    return resultOf(Failure::kBadArgument);
  }
  if (!error_.ok()) return error_.code();
  *done = 0;
  return ncclSuccess;
}

void CollComm::complete(Operation* op) {
  if (op->reduceCount > 0) {
    reduce(op->type, op->op, op->sources.data(), nranks_, op->reduceDst, op->reduceCount);
  }
  // The staged contributions go now rather than when NCCL tests.
  for (auto& s : op->staging) std::vector<uint8_t>().swap(s);
  op->state.store(Operation::kDone, std::memory_order_release);
}

bool CollComm::writeSome(int peer, Peer& p, const std::deque<Operation*>& active,
                         uint64_t firstSeq) {
  size_t budget = kBudgetBytes;
  while (p.sendSeq < firstSeq + active.size()) {
    const std::vector<Segment>& segments = active[p.sendSeq - firstSeq]->sends[peer];
    advance(segments, &p.sendSegment, &p.sendOffset, 0);
    while (p.sendSegment < segments.size()) {
      iovec ranges[kMaxIov];
      int n = 0;
      size_t total = 0;
      for (size_t k = p.sendSegment; k < segments.size() && n < kMaxIov && total < budget; k++) {
        size_t from = k == p.sendSegment ? p.sendOffset : 0;
        size_t len = std::min(segments[k].size - from, budget - total);
        if (len == 0) continue;
        ranges[n++] = iovec{segments[k].at + from, len};
        total += len;
      }
      size_t moved = 0;
      Io io = sendSomeV(p.fd.get(), ranges, n, &moved);
      if (io == Io::WouldBlock) return true;
      if (io != Io::Moved) {
        error_.fail(log_, nullptr, Failure::kPeerGone,
                    "CollNet rank %d: the connection to rank %d failed while sending %s #%lu",
                    rank_, peer, kindName(active[p.sendSeq - firstSeq]->kind),
                    static_cast<unsigned long>(p.sendSeq));
        return false;
      }
      advance(segments, &p.sendSegment, &p.sendOffset, moved);
      budget -= moved;
      if (budget == 0 && p.sendSegment < segments.size()) return true;
    }
    // Counted before the budget ends the turn (see readSome).
    p.sendSeq++;
    p.sendSegment = 0;
    p.sendOffset = 0;
    if (budget == 0) return true;
  }
  return true;
}

bool CollComm::readSome(int peer, Peer& p, const std::deque<Operation*>& active,
                        uint64_t firstSeq) {
  size_t budget = kBudgetBytes;
  while (p.recvSeq < firstSeq + active.size()) {
    const Operation* op = active[p.recvSeq - firstSeq];
    size_t moved = 0;
    if (p.inGot < kHeaderBytes) {
      Io io = recvSome(p.fd.get(), p.inHeader + p.inGot, kHeaderBytes - p.inGot, &moved);
      if (io == Io::WouldBlock) return true;
      if (io != Io::Moved) {
        error_.fail(log_, nullptr, Failure::kPeerGone,
                    "CollNet rank %d: rank %d closed its connection before %s #%lu", rank_, peer,
                    kindName(op->kind), static_cast<unsigned long>(op->seq));
        return false;
      }
      p.inGot += moved;
      if (p.inGot < kHeaderBytes) continue;
      Header h;
      if (!decodeHeader(p.inHeader, &h)) {
        error_.fail(log_, nullptr, Failure::kPeerMisbehaved,
                    "CollNet rank %d: rank %d sent a header of another protocol or version", rank_,
                    peer);
        return false;
      }
      if (h.kind != op->kind || h.seq != op->seq || h.bytes != op->recvBytes[peer]) {
        error_.fail(log_, nullptr, Failure::kPeerMisbehaved,
                    "CollNet rank %d: rank %d sent %s #%lu of %lu bytes where %s #%lu of %lu "
                    "bytes was due: the ranks issued different operations",
                    rank_, peer, kindName(h.kind), static_cast<unsigned long>(h.seq),
                    static_cast<unsigned long>(h.bytes), kindName(op->kind),
                    static_cast<unsigned long>(op->seq),
                    static_cast<unsigned long>(op->recvBytes[peer]));
        return false;
      }
      p.recvSegment = 0;
      p.recvOffset = 0;
    }
    const std::vector<Segment>& segments = op->recvs[peer];
    advance(segments, &p.recvSegment, &p.recvOffset, 0);
    while (p.recvSegment < segments.size()) {
      const Segment& s = segments[p.recvSegment];
      size_t len = std::min(s.size - p.recvOffset, budget);
      Io io = recvSome(p.fd.get(), s.at + p.recvOffset, len, &moved);
      if (io == Io::WouldBlock) return true;
      if (io != Io::Moved) {
        error_.fail(log_, nullptr, Failure::kPeerGone,
                    "CollNet rank %d: rank %d closed its connection during %s #%lu", rank_, peer,
                    kindName(op->kind), static_cast<unsigned long>(op->seq));
        return false;
      }
      advance(segments, &p.recvSegment, &p.recvOffset, moved);
      budget -= moved;
      if (budget == 0 && p.recvSegment < segments.size()) return true;
    }
    // Counted before the budget ends the turn: a payload that ends exactly
    // on the budget leaves nothing on the socket to wake poll() again, and
    // the operation would never complete.
    p.recvSeq++;
    p.inGot = 0;
    if (budget == 0) return true;
  }
  return true;
}

void CollComm::run() {
  while (!attached_.load(std::memory_order_acquire)) {
    if (stop_.load(std::memory_order_acquire)) return;
    pollfd wakeFd{wake_.get(), POLLIN, 0};
    if (::poll(&wakeFd, 1, kPollMs) > 0) {
      uint64_t count;
      ssize_t got = ::read(wake_.get(), &count, sizeof(count));
      (void)got;  // EAGAIN: another wake drained it
    }
  }
  std::vector<pollfd> fds;
  std::vector<int> ranks;
  std::deque<Operation*> active;
  while (!stop_.load(std::memory_order_acquire)) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      active = active_;
    }
    const uint64_t firstSeq = active.empty() ? 0 : active.front()->seq;
    const uint64_t posted = firstSeq + active.size();

    // Complete what every peer is done with, oldest first.
    size_t completed = 0;
    for (Operation* op : active) {
      bool done = true;
      for (int r = 0; r < nranks_ && done; r++) {
        if (r == rank_) continue;
        done = peers_[r].sendSeq > op->seq && peers_[r].recvSeq > op->seq;
      }
      if (!done) break;
      complete(op);
      completed++;
    }
    if (completed > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      active_.erase(active_.begin(), active_.begin() + static_cast<long>(completed));
      continue;  // take a fresh snapshot
    }

    fds.assign(1, pollfd{wake_.get(), POLLIN, 0});
    ranks.assign(1, -1);
    bool lost = false;
    for (int r = 0; r < nranks_; r++) {
      if (r == rank_) continue;
      Peer& p = peers_[r];
      const bool wantOut = p.sendSeq < posted;
      const bool wantIn = p.recvSeq < posted;
      if (p.closed) {
        if (wantOut || wantIn) {
          error_.fail(log_, nullptr, Failure::kPeerGone,
                      "CollNet rank %d: rank %d closed its connection before operation #%lu", rank_,
                      r, static_cast<unsigned long>(firstSeq));
          lost = true;
        }
        continue;
      }
      short events = static_cast<short>((wantIn ? POLLIN : 0) | (wantOut ? POLLOUT : 0));
      fds.push_back(pollfd{p.fd.get(), events, 0});
      ranks.push_back(r);
    }
    if (lost) break;
    int n = ::poll(fds.data(), fds.size(), kPollMs);
    if (n < 0 && errno != EINTR) {
      error_.fail(log_, nullptr, Failure::kSystemCall, "CollNet thread: poll failed: %s",
                  std::strerror(errno));
      break;
    }
    if (n <= 0) continue;
    if (fds[0].revents != 0) {
      uint64_t count;
      ssize_t got = ::read(wake_.get(), &count, sizeof(count));
      (void)got;  // EAGAIN: another wake drained it
    }
    bool ok = true;
    for (size_t i = 1; i < fds.size() && ok; i++) {
      Peer& p = peers_[ranks[i]];
      const short rev = fds[i].revents;
      if (rev == 0) continue;
      if ((rev & (POLLIN | POLLERR | POLLHUP)) && (fds[i].events & POLLIN)) {
        ok = readSome(ranks[i], p, active, firstSeq);
      } else if (rev & (POLLERR | POLLHUP | POLLNVAL)) {
        // Gone while this rank expects nothing from it: only an operation
        // posted later fails.
        p.closed = true;
        continue;
      }
      if (ok && (rev & POLLOUT)) ok = writeSome(ranks[i], p, active, firstSeq);
    }
    // A failed comm moves nothing more: NCCL only tests and closes it now.
    if (!ok) break;
  }
}

}  // namespace ncclnet::socket::collnet
