// SPDX-License-Identifier: Apache-2.0
// ncclnet-churn: one rank's cycles, or its stream, through the SDK loader.
#include "rank.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <thread>

#include "ncclnet/host/callbacks.hpp"

namespace ncclnet::churn {

namespace {

constexpr int kTag = 7;
constexpr uint64_t kLastFlag = uint64_t{1} << 63;  // stream: the sender's final message
constexpr size_t kHeader = sizeof(uint64_t);       // stream: each message starts with its seq

double now() {
  static const auto start = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The bytes of message `seq`: xorshift64 from a seed per message, so a
// message delivered in place of another (or a stale buffer) never matches.
void fillPattern(char* p, size_t size, uint64_t seq) {
  uint64_t x = (seq + 1) * 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < size; i += sizeof(x)) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(p + i, &x, std::min(sizeof(x), size - i));
  }
}

std::string fmt(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", seconds);
  return text;
}

}  // namespace

Rank::Rank(int rank, const RankOptions& options, Control& control)
    : rank_(rank), options_(options), control_(control) {}

Rank::~Rank() {
  // After a failure the comms are left open and finalize is not called: a
  // plugin that just failed may wait in close for its own bound, and the
  // process ends right after.
  if (net_ != nullptr && ctx_ != nullptr && !failed_) net_->finalize(ctx_);
}

void Rank::fail(int code, const std::string& message) {
  failed_ = true;
  throw Failure{code, message};
}

int Rank::run() {
  try {
    load();
    if (options_.seconds > 0)
      stream();
    else
      churn();
    return kExitOk;
  } catch (const Failure& f) {
    std::printf("rank %d: FAILED (%s): %s\n", rank_,
                f.code == kExitPluginError ? "plugin error"
                : f.code == kExitStall     ? "hang"
                : f.code == kExitCorrupt   ? "corruption"
                : f.code == kExitGrew      ? "resources grew"
                : f.code == kExitControl   ? "control link"
                                           : "setup",
                f.message.c_str());
    std::fflush(stdout);
    return f.code;
  }
}

void Rank::load() {
  ncclnet::host::LoaderOptions lo;
  lo.pluginList = options_.plugin;
  ncclnet::host::Loader loader(lo);
  if (loader.load(&plugin_) != ncclSuccess)
    fail(kExitUsage, "cannot load '" + options_.plugin + "': " + loader.report().outcome);
  ncclnet::host::NetView& net = plugin_->net();
  ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  if (net.init(&ctx_, 0xc4u + static_cast<uint64_t>(rank_), &config, ncclnet::host::stderrLogger(),
               ncclnet::host::profilerCallback()) != ncclSuccess)
    fail(kExitPluginError, "init failed");
  net_ = &net;
  int ndev = 0;
  ncclNetProperties_v12_t props;
  if (net.devices(&ndev) != ncclSuccess || options_.dev >= ndev ||
      net.getProperties(options_.dev, &props) != ncclSuccess)
    fail(kExitUsage, "device " + std::to_string(options_.dev) + " does not exist");
  std::printf("rank %d: %s (ncclNetPlugin_v%d), device %d '%s'\n", rank_, plugin_->name(),
              plugin_->version(), options_.dev, props.name ? props.name : "?");
  std::fflush(stdout);
  buffer_.assign(std::max<size_t>(options_.size, 1), 0);
  expected_.assign(buffer_.size(), 0);
  lastProgress_ = now();
}

// Rank 1 listens and hands its handle over the control link; rank 0
// connects with it. Both poll their own call, as NCCL's proxy does.
void* Rank::connectOrAccept() {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* comm = nullptr;
  void* listenComm = nullptr;
  if (rank_ == 1) {
    if (net_->listen(ctx_, options_.dev, handle, &listenComm) != ncclSuccess)
      fail(kExitPluginError, "listen failed");
    if (!control_.send(handle, sizeof(handle))) fail(kExitControl, "rank 0 is gone");
  } else if (!control_.recv(handle, sizeof(handle), options_.stallSec)) {
    fail(kExitControl, "no handle from rank 1 within " + fmt(options_.stallSec));
  }
  double start = now();
  while (comm == nullptr) {
    ncclResult_t rc = rank_ == 1 ? net_->accept(listenComm, &comm, nullptr)
                                 : net_->connect(ctx_, options_.dev, handle, &comm, nullptr);
    const char* call = rank_ == 1 ? "accept" : "connect";
    if (rc != ncclSuccess)
      fail(kExitPluginError,
           std::string(call) + " returned " + std::to_string(rc) + " after " + fmt(now() - start));
    if (comm == nullptr && now() - start > options_.stallSec)
      fail(kExitStall, std::string(call) + " did not complete within " + fmt(options_.stallSec));
    if (comm == nullptr) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (listenComm != nullptr && net_->closeListen(listenComm) != ncclSuccess)
    fail(kExitPluginError, "closeListen failed");
  lastProgress_ = now();
  return comm;
}

void* Rank::postSend(void* comm, void* mhandle, size_t size) {
  double start = now();
  for (;;) {
    void* request = nullptr;
    if (net_->isend(comm, buffer_.data(), size, kTag, mhandle, nullptr, &request) != ncclSuccess)
      fail(kExitPluginError, "isend of " + std::to_string(size) + " B failed after " +
                                 fmt(now() - lastProgress_) + " without a completed transfer");
    if (request != nullptr) return request;
    // NULL: the plugin cannot take it yet (a receiver-driven plugin waits
    // for the receive to be posted); call again.
    if (now() - start > options_.stallSec)
      fail(kExitStall, "isend still NULL after " + fmt(options_.stallSec));
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void* Rank::postRecv(void* comm, void* mhandle, size_t size) {
  double start = now();
  for (;;) {
    void* request = nullptr;
    void* data = buffer_.data();
    int tag = kTag;
    if (net_->irecv(comm, 1, &data, &size, &tag, &mhandle, nullptr, &request) != ncclSuccess)
      fail(kExitPluginError, "irecv of " + std::to_string(size) + " B failed after " +
                                 fmt(now() - lastProgress_) + " without a completed transfer");
    if (request != nullptr) return request;
    if (now() - start > options_.stallSec)
      fail(kExitStall, "irecv still NULL after " + fmt(options_.stallSec));
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Tests `request` until it is done. An error is the plugin's verdict (the
// time since the last completion is how long it took to give one); no
// completion within the stall bound is a hang.
void Rank::wait(void* request, const std::string& what, size_t expectSize) {
  double start = now();
  long idle = 0;
  for (;;) {
    int done = 0;
    int sizes[NCCL_NET_MAX_REQUESTS] = {};
    ncclResult_t rc = net_->test(request, &done, sizes);
    double t = now();
    if (rc != ncclSuccess)
      fail(kExitPluginError, what + ": test() returned " + std::to_string(rc) + " after " +
                                 fmt(t - lastProgress_) + " without a completed transfer");
    if (done) {
      if (expectSize != SIZE_MAX && static_cast<size_t>(sizes[0]) != expectSize)
        fail(kExitCorrupt, what + ": completed with size " + std::to_string(sizes[0]) + ", sent " +
                               std::to_string(expectSize));
      maxGap_ = std::max(maxGap_, t - lastProgress_);
      lastProgress_ = t;
      transfers_++;
      return;
    }
    if (t - start > options_.stallSec)
      fail(kExitStall, what + ": not done after " + fmt(options_.stallSec) +
                           " (the stall bound), and the plugin reports no error");
    // Spin for the first millisecond, as NCCL's proxy does; past that the
    // transfer is waiting on the network, and a short sleep leaves the
    // cores to the peer.
    if (++idle > 1000) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void Rank::verify(uint64_t seq, size_t offset) {
  fillPattern(expected_.data(), expected_.size(), seq);
  for (size_t i = offset; i < buffer_.size(); i++) {
    if (buffer_[i] != expected_[i])
      fail(kExitCorrupt, "message " + std::to_string(seq) + ": byte " + std::to_string(i) + " of " +
                             std::to_string(buffer_.size()) + " differs");
  }
}

// Rank 1 tells rank 0 whether the bytes arrived intact; rank 0 keeps its
// send comm open until then (a send may complete before its receive).
void Rank::exchangeVerdict(bool ok) {
  char verdict = ok ? 'y' : 'n';
  if (rank_ == 1) {
    if (!control_.send(&verdict, 1)) fail(kExitControl, "rank 0 is gone");
    return;
  }
  if (!control_.recv(&verdict, 1, options_.stallSec))
    fail(kExitControl, "no verdict from rank 1 within " + fmt(options_.stallSec));
  if (verdict != 'y') fail(kExitCorrupt, "rank 1 received wrong bytes");
}

void Rank::oneCycle(uint64_t cycle) {
  void* comm = connectOrAccept();
  void* mr = nullptr;
  if (net_->regMr(comm, buffer_.data(), buffer_.size(), NCCL_PTR_HOST, &mr) != ncclSuccess)
    fail(kExitPluginError, "regMr failed");
  std::string what = "cycle " + std::to_string(cycle);
  if (rank_ == 0) {
    fillPattern(buffer_.data(), options_.size, cycle);
    wait(postSend(comm, mr, options_.size), what + " isend", SIZE_MAX);
  } else {
    std::fill(buffer_.begin(), buffer_.end(), 0);
    wait(postRecv(comm, mr, options_.size), what + " irecv", options_.size);
    try {
      verify(cycle, 0);
    } catch (const Failure&) {
      exchangeVerdict(false);
      throw;
    }
  }
  exchangeVerdict(true);
  if (net_->deregMr(comm, mr) != ncclSuccess) fail(kExitPluginError, "deregMr failed");
  ncclResult_t rc = rank_ == 0 ? net_->closeSend(comm) : net_->closeRecv(comm);
  if (rc != ncclSuccess) fail(kExitPluginError, "close failed");
}

void Rank::churn() {
  uint64_t cycles = options_.cycles;
  uint64_t warmup = options_.warmup ? options_.warmup : std::max<uint64_t>(1, cycles / 10);
  uint64_t every =
      options_.sampleEvery ? options_.sampleEvery : std::max<uint64_t>(1, cycles / 100);
  std::vector<Sample> samples{sampleProcess(0)};
  size_t baselineIndex = 0;
  double start = now();
  for (uint64_t c = 0; c < cycles; c++) {
    oneCycle(c);
    uint64_t done = c + 1;
    if (done == warmup) baselineIndex = samples.size();
    if (done == warmup || done % every == 0 || done == cycles)
      samples.push_back(sampleProcess(done));
  }
  double elapsed = now() - start;
  if (!options_.samplesPrefix.empty()) {
    std::string path = options_.samplesPrefix + ".rank" + std::to_string(rank_) + ".csv";
    if (FILE* f = std::fopen(path.c_str(), "w")) {
      std::fprintf(f, "cycle,rss_kib,fds,threads\n");
      for (const Sample& s : samples)
        std::fprintf(f, "%" PRIu64 ",%" PRIu64 ",%d,%d\n", s.cycle, s.rssKiB, s.fds, s.threads);
      std::fclose(f);
    }
  }
  Growth g = judge(samples, baselineIndex, options_.tolerance);
  std::printf("rank %d: %" PRIu64
              " connect/transfer/close cycles of %zu B in %.1f s (%.2f ms each), "
              "every byte verified; after %" PRIu64 " warm-up cycles: RSS %" PRIu64 " -> %" PRIu64
              " KiB (peak %" PRIu64
              ", %.1f B/cycle), fds %d -> %d (peak %d), threads %d -> %d (peak %d): %s\n",
              rank_, cycles, options_.size, elapsed, 1000 * elapsed / static_cast<double>(cycles),
              warmup, g.baseline.rssKiB, g.last.rssKiB, g.peak.rssKiB, g.rssBytesPerCycle,
              g.baseline.fds, g.last.fds, g.peak.fds, g.baseline.threads, g.last.threads,
              g.peak.threads, g.verdict.c_str());
  std::fflush(stdout);
  if (!g.flat) fail(kExitGrew, g.verdict);
}

// One connection, messages back to back for options_.seconds: what a fault
// (loss, partition, rate limit) hits. Each message carries its sequence
// number, the last one a flag, so the receiver needs no other signal.
void Rank::stream() {
  if (options_.size < kHeader) fail(kExitUsage, "--size must be at least 8 B to stream");
  void* comm = connectOrAccept();
  void* mr = nullptr;
  if (net_->regMr(comm, buffer_.data(), buffer_.size(), NCCL_PTR_HOST, &mr) != ncclSuccess)
    fail(kExitPluginError, "regMr failed");
  std::printf("rank %d: streaming %zu B messages\n", rank_, options_.size);
  std::fflush(stdout);
  double start = now();
  bool last = false;
  for (uint64_t seq = 0; !last; seq++) {
    std::string what = "message " + std::to_string(seq);
    if (rank_ == 0) {
      last = now() - start >= options_.seconds;
      fillPattern(buffer_.data(), options_.size, seq);
      uint64_t header = seq | (last ? kLastFlag : 0);
      std::memcpy(buffer_.data(), &header, kHeader);
      wait(postSend(comm, mr, options_.size), what + " isend", SIZE_MAX);
    } else {
      std::fill(buffer_.begin(), buffer_.end(), 0);
      wait(postRecv(comm, mr, options_.size), what + " irecv", options_.size);
      uint64_t header = 0;
      std::memcpy(&header, buffer_.data(), kHeader);
      last = (header & kLastFlag) != 0;
      if ((header & ~kLastFlag) != seq)
        fail(kExitCorrupt, "expected message " + std::to_string(seq) + ", got " +
                               std::to_string(header & ~kLastFlag));
      verify(seq, kHeader);
    }
    if (options_.pauseMs > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.pauseMs));
  }
  exchangeVerdict(true);
  double elapsed = now() - start;
  if (net_->deregMr(comm, mr) != ncclSuccess) fail(kExitPluginError, "deregMr failed");
  ncclResult_t rc = rank_ == 0 ? net_->closeSend(comm) : net_->closeRecv(comm);
  if (rc != ncclSuccess) fail(kExitPluginError, "close failed");
  std::printf("rank %d: %" PRIu64
              " messages of %zu B in %.1f s, every byte verified; longest "
              "wait for a completion %.1f s\n",
              rank_, transfers_, options_.size, elapsed, maxGap_);
  std::fflush(stdout);
}

}  // namespace ncclnet::churn
