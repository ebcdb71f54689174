// SPDX-License-Identifier: Apache-2.0
#include "worker.hpp"

#include <cuda_runtime.h>
#include <nccl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "run_files.hpp"
#if NCCL_DRIVER_HAVE_GIN
#include "gin_alltoall.hpp"
#endif

namespace nccldriver {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Thrown to end the rank with an exit code; the message is its ERROR line.
struct RankFailure : std::runtime_error {
  RankFailure(int c, const std::string& what) : std::runtime_error(what), code(c) {}
  int code;
};

void ncclOk(ncclResult_t r, const char* what) {
  if (r != ncclSuccess && r != ncclInProgress)
    throw RankFailure(kWorkerNcclError, std::string(what) + ": " + ncclGetErrorString(r));
}

void cudaOk(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw RankFailure(kWorkerSetupFailed, std::string(what) + ": " + cudaGetErrorString(e));
}

class ResultFile {
 public:
  explicit ResultFile(const std::string& path) : f_(std::fopen(path.c_str(), "w")) {
    if (f_ == nullptr) throw RankFailure(kWorkerSetupFailed, "cannot write " + path);
  }
  ~ResultFile() { std::fclose(f_); }
  ResultFile(const ResultFile&) = delete;
  ResultFile& operator=(const ResultFile&) = delete;
  // Each line is flushed: a rank killed later leaves what it had written.
  template <class... A>
  void line(const char* format, A... args) {
    std::fprintf(f_, format, args...);
    std::fputc('\n', f_);
    std::fflush(f_);
  }

 private:
  std::FILE* f_;
};

// Rank 0 makes the id and publishes it by rename, so a reader never sees
// half a file; the others poll for it until the job's deadline.
ncclUniqueId exchangeId(const std::string& path, int rank, Clock::time_point deadline) {
  ncclUniqueId id;
  if (rank == 0) {
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess)
      throw RankFailure(kWorkerNcclError, std::string("ncclGetUniqueId: ") + ncclGetErrorString(r));
    std::string tmp = path + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(id.internal, sizeof(id.internal));
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw RankFailure(kWorkerSetupFailed, "cannot publish " + path);
    return id;
  }
  while (Clock::now() < deadline) {
    std::ifstream in(path, std::ios::binary);
    if (in && in.read(id.internal, sizeof(id.internal))) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw RankFailure(kWorkerSetupFailed, "rank 0's communicator id never came: " + path);
}

class Rank {
 public:
  Rank(const Options& o, ResultFile& out)
      : o_(o),
        out_(out),
        files_{o.runDir, o.workerIndex},
        deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(o.timeoutSec))) {}
  ~Rank() { release(); }
  Rank(const Rank&) = delete;
  Rank& operator=(const Rank&) = delete;

  int run();

 private:
  enum class Waited { Done, Aborted };

  void init(const std::string& tag);
  void destroy();
  // `symmetric`: from ncclMemAlloc, registered as windows, and a device
  // communicator with GIN for the gin-alltoall.
  void allocate(size_t bytes, bool symmetric = false);
  void release();
  void launch(Op op, const Shape& s);
  Waited wait(const char* what);
  bool check(Op op, const Shape& s, size_t bytes);
  void fill(Op op, const Shape& s);
  void poison(const Shape& s);
  void point(Op op, size_t bytes);
  void initCycles();
  void traffic();  // the ops, again and again, until the planted fault ends them
  void skewedTail();
  void truncatedRing();

  const Options& o_;
  ResultFile& out_;
  RunFiles files_;
  Clock::time_point deadline_;
  Clock::time_point trafficStart_{};
  bool abortArmed_ = false;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  float* send_ = nullptr;
  float* recv_ = nullptr;
  bool symmetric_ = false;
#if NCCL_DRIVER_HAVE_GIN
  GinAllToAll* gin_ = nullptr;
#endif
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

void Rank::init(const std::string& tag) {
  ncclUniqueId id = exchangeId(files_.uniqueId(tag), o_.worker, deadline_);
  ncclResult_t r = ncclCommInitRank(&comm_, o_.ranks, id, o_.worker);
  if (r != ncclSuccess)
    throw RankFailure(kWorkerNcclError, std::string("ncclCommInitRank: ") + ncclGetErrorString(r) +
                                            ": " + ncclGetLastError(nullptr));
}

void Rank::destroy() {
  if (comm_ == nullptr) return;
#if NCCL_DRIVER_HAVE_GIN
  ncclResult_t torn = ginTeardown(comm_, gin_);
  gin_ = nullptr;
  if (torn != ncclSuccess)
    throw RankFailure(kWorkerNcclError, std::string("the GIN device communicator's teardown: ") +
                                            ncclGetErrorString(torn));
#endif
  ncclResult_t r = ncclCommDestroy(comm_);
  comm_ = nullptr;
  if (r != ncclSuccess)
    throw RankFailure(kWorkerNcclError, std::string("ncclCommDestroy: ") + ncclGetErrorString(r));
}

void Rank::allocate(size_t bytes, bool symmetric) {
  cudaOk(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  if (symmetric) {
#if NCCL_DRIVER_HAVE_GIN
    symmetric_ = true;
    ncclOk(ncclMemAlloc(reinterpret_cast<void**>(&send_), bytes), "ncclMemAlloc");
    ncclOk(ncclMemAlloc(reinterpret_cast<void**>(&recv_), bytes), "ncclMemAlloc");
    std::string why;
    gin_ = ginSetup(comm_, send_, recv_, bytes, &why);
    if (gin_ == nullptr) throw RankFailure(kWorkerNcclError, why);
#else
    throw RankFailure(kWorkerSetupFailed,
                      "gin-alltoall: this nccl-driver was built without nvcc and NCCL's device "
                      "headers (nccl_device.h)");
#endif
  } else {
    cudaOk(cudaMalloc(&send_, bytes), "cudaMalloc");
    cudaOk(cudaMalloc(&recv_, bytes), "cudaMalloc");
  }
  cudaOk(cudaEventCreate(&start_), "cudaEventCreate");
  cudaOk(cudaEventCreate(&stop_), "cudaEventCreate");
}

void Rank::release() {
#if NCCL_DRIVER_HAVE_GIN
  ginTeardown(comm_, gin_);  // errors are the abort's business now
  gin_ = nullptr;
#endif
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (stop_ != nullptr) cudaEventDestroy(stop_);
  for (float* p : {send_, recv_}) {
    if (p == nullptr) continue;
    if (symmetric_) {
      ncclMemFree(p);
    } else {
      cudaFree(p);
    }
  }
  symmetric_ = false;
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  start_ = stop_ = nullptr;
  send_ = recv_ = nullptr;
  stream_ = nullptr;
}

void Rank::launch(Op op, const Shape& s) {
  int rank = o_.worker, n = o_.ranks;
  switch (op) {
    case Op::AllReduce:
      ncclOk(ncclAllReduce(send_, recv_, s.recvCount, ncclFloat, ncclSum, comm_, stream_),
             "ncclAllReduce");
      break;
    case Op::AllGather:
      ncclOk(ncclAllGather(send_, recv_, s.chunk, ncclFloat, comm_, stream_), "ncclAllGather");
      break;
    case Op::ReduceScatter:
      ncclOk(ncclReduceScatter(send_, recv_, s.chunk, ncclFloat, ncclSum, comm_, stream_),
             "ncclReduceScatter");
      break;
    case Op::Broadcast:
      ncclOk(ncclBroadcast(send_, recv_, s.recvCount, ncclFloat, broadcastRoot(n), comm_, stream_),
             "ncclBroadcast");
      break;
    case Op::SendRecv:
      ncclOk(ncclGroupStart(), "ncclGroupStart");
      ncclOk(ncclSend(send_, s.sendCount, ncclFloat, (rank + 1) % n, comm_, stream_), "ncclSend");
      ncclOk(ncclRecv(recv_, s.recvCount, ncclFloat, (rank + n - 1) % n, comm_, stream_),
             "ncclRecv");
      ncclOk(ncclGroupEnd(), "ncclGroupEnd");
      break;
    case Op::AllToAll:
      ncclOk(ncclGroupStart(), "ncclGroupStart");
      for (int peer = 0; peer < n; peer++) {
        ncclOk(ncclSend(send_ + size_t(peer) * s.chunk, s.chunk, ncclFloat, peer, comm_, stream_),
               "ncclSend");
        ncclOk(ncclRecv(recv_ + size_t(peer) * s.chunk, s.chunk, ncclFloat, peer, comm_, stream_),
               "ncclRecv");
      }
      ncclOk(ncclGroupEnd(), "ncclGroupEnd");
      break;
    case Op::GinAllToAll:
#if NCCL_DRIVER_HAVE_GIN
      cudaOk(ginLaunch(gin_, s.chunk * sizeof(float), stream_), "the GIN all-to-all kernel");
#endif
      break;
  }
}

// Polls the stream and NCCL's asynchronous error: a failing network shows
// there (the proxy records it), while the kernel waits on and never ends.
Rank::Waited Rank::wait(const char* what) {
  for (;;) {
    cudaError_t q = cudaStreamQuery(stream_);
    if (q == cudaSuccess) return Waited::Done;
    if (q != cudaErrorNotReady) cudaOk(q, what);
    ncclResult_t async = ncclSuccess;
    ncclOk(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError");
    bool failed = async != ncclSuccess && async != ncclInProgress;
    // Aborting, a rank whose peer aborted a moment earlier may see that as
    // an error first: it aborts then too, as an application would.
    if (abortArmed_ && (failed || secondsSince(trafficStart_) * 1e3 >= o_.abortAfterMs)) {
      Clock::time_point t = Clock::now();
      ncclOk(ncclCommAbort(comm_), "ncclCommAbort");
      comm_ = nullptr;
      out_.line("EVENT aborted%s %.3f", failed ? " (after its peer's)" : "", secondsSince(t));
      return Waited::Aborted;
    }
    if (failed)
      throw RankFailure(kWorkerNcclError, std::string(what) + ": NCCL raised " +
                                              ncclGetErrorString(async) + ": " +
                                              ncclGetLastError(comm_));
    if (Clock::now() >= deadline_)
      throw RankFailure(kWorkerDeadline,
                        std::string(what) + ": not done when the job's time ran out");
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void Rank::fill(Op op, const Shape& s) {
  std::vector<float> host(s.sendCount);
  for (size_t i = 0; i < host.size(); i++) host[i] = inputAt(o_.worker, i);
  // On the op's own stream: the stream is non-blocking, so a copy or memset
  // on the legacy default stream would race with the op's kernels.
  cudaOk(cudaMemcpyAsync(send_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice,
                         stream_),
         "cudaMemcpyAsync");
  poison(s);
  cudaOk(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  (void)op;
}

// NaN everywhere the op writes: never a valid result. The broadcast's root
// receives too (out of place).
void Rank::poison(const Shape& s) {
  cudaOk(cudaMemsetAsync(recv_, 0xff, s.recvCount * sizeof(float), stream_), "cudaMemsetAsync");
}

bool Rank::check(Op op, const Shape& s, size_t bytes) {
  std::vector<float> got(s.recvCount);
  cudaOk(cudaMemcpyAsync(got.data(), recv_, got.size() * sizeof(float), cudaMemcpyDeviceToHost,
                         stream_),
         "cudaMemcpyAsync");
  cudaOk(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  for (size_t i = 0; i < got.size(); i++) {
    float want = expectedAt(op, s, o_.worker, o_.ranks, i);
    if (got[i] != want) {
      out_.line("MISMATCH %s %zu element %zu is %g, expected %g", opName(op), bytes, i,
                double(got[i]), double(want));
      return false;
    }
  }
  return true;
}

// One point: a checked run, the warm-up, the timed run, then a check of the
// last timed run's output (a plugin that completes early or reorders under
// pipelining breaks that one, not the first).
void Rank::point(Op op, size_t bytes) {
  std::optional<Shape> s = shapeOf(op, bytes, o_.ranks);
  if (!s) return;
  fill(op, *s);
  launch(op, *s);
  if (wait(opName(op)) == Waited::Aborted) return;
  bool ok = check(op, *s, bytes);
  for (int i = 0; i < o_.warmup; i++) launch(op, *s);
  poison(*s);  // after the warm-up, before the timed runs, in stream order
  cudaOk(cudaEventRecord(start_, stream_), "cudaEventRecord");
  for (int i = 0; i < o_.iters; i++) launch(op, *s);
  cudaOk(cudaEventRecord(stop_, stream_), "cudaEventRecord");
  if (wait(opName(op)) == Waited::Aborted) return;
  float ms = 0;
  cudaOk(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  ok = ok && check(op, *s, bytes);
  out_.line("POINT %s %zu %.3f %s", opName(op), bytes, double(ms) * 1e3 / o_.iters,
            ok ? "ok" : "FAIL");
  if (!ok) throw RankFailure(kWorkerWrongResult, std::string(opName(op)) + ": wrong result");
}

void Rank::initCycles() {
  const size_t bytes = size_t(1) << 20;
  for (int c = 0; c < o_.initCycles; c++) {
    init(std::to_string(c));
    allocate(bytes);
    std::optional<Shape> s = shapeOf(Op::AllReduce, bytes, o_.ranks);
    fill(Op::AllReduce, *s);
    launch(Op::AllReduce, *s);
    wait("init cycle all-reduce");
    if (!check(Op::AllReduce, *s, bytes))
      throw RankFailure(kWorkerWrongResult, "init cycle " + std::to_string(c) + ": wrong result");
    destroy();
    release();
  }
  out_.line("EVENT init-cycles %d", o_.initCycles);
}

void Rank::traffic() {
  trafficStart_ = Clock::now();
  if (o_.killRank == o_.worker) {
    // The victim dies in the middle of its traffic, as a crashed process
    // would: no close, no abort, its sockets reset by the kernel.
    int afterMs = o_.killAfterMs;
    out_.line("EVENT killing %.3f", afterMs / 1e3);
    std::thread([afterMs] {
      std::this_thread::sleep_for(std::chrono::milliseconds(afterMs));
      raise(SIGKILL);
    }).detach();
  }
  abortArmed_ = o_.abortAfterMs >= 0;
  // Until the fault ends it: an error (the killed rank's peers), the abort,
  // or the deadline (a survivor that never learns of its peer's death).
  while (comm_ != nullptr)
    for (Op op : o_.ops)
      for (size_t bytes : o_.sizes())
        if (comm_ != nullptr) point(op, bytes);
}

void Rank::skewedTail() {
  const size_t bytes = 8 << 10;  // below every bundled plugin's eager limit
  Shape s = *shapeOf(Op::Broadcast, bytes, o_.ranks);
  fill(Op::Broadcast, s);
  bool root = o_.worker == broadcastRoot(o_.ranks);
  if (!root) std::this_thread::sleep_for(std::chrono::milliseconds(o_.tailSkewMs));
  launch(Op::Broadcast, s);
  wait("the skewed broadcast");
  if (root) {
    destroy();  // at once, as a rank whose part is done would
    out_.line("EVENT destroyed-first 0");
  } else if (!check(Op::Broadcast, s, bytes)) {
    throw RankFailure(kWorkerWrongResult, "the skewed broadcast: wrong result");
  }
}

void Rank::truncatedRing() {
  int n = o_.ranks, rank = o_.worker;
  const size_t sent = 2048, received = 1024;  // floats: 8 KiB sent, 4 KiB posted
  Shape s{sent, received, received};
  fill(Op::SendRecv, s);
  ncclOk(ncclGroupStart(), "ncclGroupStart");
  ncclOk(ncclSend(send_, sent, ncclFloat, (rank + 1) % n, comm_, stream_), "ncclSend");
  ncclOk(ncclRecv(recv_, received, ncclFloat, (rank + n - 1) % n, comm_, stream_), "ncclRecv");
  ncclOk(ncclGroupEnd(), "ncclGroupEnd");
  wait("a send of 8 KiB into a receive of 4 KiB");
  throw RankFailure(kWorkerWrongResult,
                    "a send of 8 KiB into a receive of 4 KiB completed without an error: the "
                    "plugin did not report the truncation");
}

int Rank::run() {
  int devices = 0;
  cudaOk(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices < 1) throw RankFailure(kWorkerSetupFailed, "no CUDA device");
  cudaOk(cudaSetDevice(o_.worker % devices), "cudaSetDevice");
  int version = 0;
  ncclGetVersion(&version);
  out_.line("VERSION %d", version);
  if (o_.initCycles > 0) initCycles();
  init("main");
  bool gin = std::find(o_.ops.begin(), o_.ops.end(), Op::GinAllToAll) != o_.ops.end();
  allocate(o_.maxBytes, gin);
  if (o_.faultPlanted()) {
    traffic();
  } else if (o_.truncateP2p) {
    truncatedRing();
  } else {
    for (Op op : o_.ops)
      for (size_t bytes : o_.sizes()) point(op, bytes);
    if (o_.tailSkewMs >= 0) skewedTail();
    destroy();
  }
  out_.line("DONE");
  return kWorkerOk;
}

}  // namespace

int printProbe() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess || code < 20900) return 1;
  std::printf("nccl %d.%d.%d\n", code / 10000, code % 10000 / 100, code % 100);
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess)
    std::printf("gpus 0 %s\n", cudaGetErrorString(e));
  else
    std::printf("gpus %d\n", devices);
  return 0;
}

int runWorker(const Options& o) {
  // NCCL writes its log to this stdout (the launcher made it the rank's log
  // file): a line at a time, so a rank that dies leaves whole lines.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  RunFiles files{o.runDir, o.workerIndex};
  try {
    ResultFile out(files.result(o.worker));
    try {
      Rank rank(o, out);
      return rank.run();
    } catch (const RankFailure& f) {
      out.line("ERROR %s", f.what());
      std::fprintf(stderr, "nccl-driver rank %d: %s\n", o.worker, f.what());
      return f.code;
    }
  } catch (const RankFailure& f) {
    std::fprintf(stderr, "nccl-driver rank %d: %s\n", o.worker, f.what());
    return f.code;
  }
}

}  // namespace nccldriver
