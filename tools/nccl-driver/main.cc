// SPDX-License-Identifier: Apache-2.0
// nccl-driver: all-reduce, all-gather and send/recv between 2 ranks on 2
// GPUs of one process (ncclCommInitAll), every result checked, bus bandwidth
// printed per size. With NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 all
// traffic goes through the network plugin NCCL selected.
//
//   nccl-driver [--max-bytes 256M] [--min-bytes 64K] [--iters 10] [--ops
//   allreduce,allgather,sendrecv]
//
// Output: one "RESULT <op> <bytes> <time_us> <algbw_GBps> <busbw_GBps> <ok|FAIL>"
// line per point (bytes as nccl-tests counts them: the all-gather's total
// output), then "SUMMARY ok" or "SUMMARY FAIL".
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ncclnet/host/build_info.hpp"

namespace {

constexpr int kRanks = 2;

#define CUDA_OK(call)                                                                            \
  do {                                                                                           \
    cudaError_t e = (call);                                                                      \
    if (e != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)
#define NCCL_OK(call)                                                                            \
  do {                                                                                           \
    ncclResult_t r = (call);                                                                     \
    if (r != ncclSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

struct Options {
  size_t minBytes = 64 << 10;
  size_t maxBytes = 256 << 20;
  int iters = 10;
  int warmup = 2;
  std::vector<std::string> ops = {"allreduce", "allgather", "sendrecv"};
};

bool parseSize(const char* text, size_t* out) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text) return false;
  if (*end == 'K' || *end == 'k')
    v <<= 10, end++;
  else if (*end == 'M' || *end == 'm')
    v <<= 20, end++;
  else if (*end == 'G' || *end == 'g')
    v <<= 30, end++;
  *out = v;
  return *end == '\0';
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (v == nullptr) return false;
    i++;
    if (a == "--max-bytes") {
      if (!parseSize(v, &o->maxBytes)) return false;
    } else if (a == "--min-bytes") {
      if (!parseSize(v, &o->minBytes)) return false;
    } else if (a == "--iters")
      o->iters = std::max(1, std::atoi(v));
    else if (a == "--warmup")
      o->warmup = std::max(0, std::atoi(v));
    else if (a == "--ops") {
      o->ops.clear();
      std::string list = v;
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        if (comma > start) o->ops.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else {
      return false;
    }
  }
  return o->minBytes >= 8 && o->minBytes <= o->maxBytes;
}

// Values that are exact in float, so sums compare with ==.
float valueAt(int rank, size_t i) {
  return float((i * 7 + rank * 13) % 1021);
}

struct Rank {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};

// One point: `launch(r)` enqueues the op for rank r; all ranks in one group.
template <class Launch>
double timeOp(std::vector<Rank>& ranks, int iters, Launch launch) {
  for (int r = 0; r < kRanks; r++) {
    CUDA_OK(cudaSetDevice(r));
    CUDA_OK(cudaEventRecord(ranks[r].start, ranks[r].stream));
  }
  for (int it = 0; it < iters; it++) {
    NCCL_OK(ncclGroupStart());
    for (int r = 0; r < kRanks; r++) launch(r);
    NCCL_OK(ncclGroupEnd());
  }
  double worst = 0;
  for (int r = 0; r < kRanks; r++) {
    CUDA_OK(cudaSetDevice(r));
    CUDA_OK(cudaEventRecord(ranks[r].stop, ranks[r].stream));
    CUDA_OK(cudaEventSynchronize(ranks[r].stop));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, ranks[r].start, ranks[r].stop));
    worst = std::max(worst, double(ms) * 1e3 / iters);
  }
  return worst;  // microseconds per iteration
}

void upload(Rank& r, int device, const std::vector<float>& host, float* dst) {
  CUDA_OK(cudaSetDevice(device));
  CUDA_OK(cudaMemcpy(dst, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  (void)r;
}

void poison(int device, float* dst, size_t count) {
  CUDA_OK(cudaSetDevice(device));
  CUDA_OK(cudaMemset(dst, 0xff, count * sizeof(float)));  // NaN: never a valid result
}

std::vector<float> download(int device, const float* src, size_t count) {
  std::vector<float> host(count);
  CUDA_OK(cudaSetDevice(device));
  CUDA_OK(cudaMemcpy(host.data(), src, count * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("%s\n", ncclnet::host::versionLine("nccl-driver").c_str());
    return 0;
  }
  Options o;
  if (!parse(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: nccl-driver [--min-bytes 64K] [--max-bytes 256M] [--iters 10] "
                 "[--warmup 2] [--ops allreduce,allgather,sendrecv]\n");
    return 2;
  }
  int devices = 0;
  CUDA_OK(cudaGetDeviceCount(&devices));
  if (devices < kRanks) {
    std::fprintf(stderr, "nccl-driver: needs %d GPUs, found %d\n", kRanks, devices);
    return 2;
  }
  int version = 0;
  NCCL_OK(ncclGetVersion(&version));
  std::printf("nccl-driver: NCCL %d, %d ranks on GPUs 0..%d in one process\n", version, kRanks,
              kRanks - 1);

  std::vector<Rank> ranks(kRanks);
  std::vector<ncclComm_t> comms(kRanks);
  int devs[kRanks] = {0, 1};
  NCCL_OK(ncclCommInitAll(comms.data(), kRanks, devs));
  size_t maxCount = o.maxBytes / sizeof(float);
  for (int r = 0; r < kRanks; r++) {
    ranks[r].comm = comms[r];
    CUDA_OK(cudaSetDevice(r));
    CUDA_OK(cudaStreamCreateWithFlags(&ranks[r].stream, cudaStreamNonBlocking));
    CUDA_OK(cudaMalloc(&ranks[r].send, maxCount * sizeof(float)));
    CUDA_OK(cudaMalloc(&ranks[r].recv, maxCount * sizeof(float)));
    CUDA_OK(cudaEventCreate(&ranks[r].start));
    CUDA_OK(cudaEventCreate(&ranks[r].stop));
  }

  bool allOk = true;
  std::printf("%-10s %12s %12s %12s %12s %6s\n", "op", "bytes", "time_us", "algbw_GB/s",
              "busbw_GB/s", "check");
  for (const std::string& op : o.ops) {
    for (size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= 4) {
      size_t count = bytes / sizeof(float);  // output elements per rank
      size_t perRank = op == "allgather" ? count / kRanks : count;
      if (perRank == 0) continue;
      // Inputs, poisoned outputs.
      for (int r = 0; r < kRanks; r++) {
        std::vector<float> host(perRank);
        for (size_t i = 0; i < perRank; i++) host[i] = valueAt(r, i);
        upload(ranks[r], r, host, ranks[r].send);
        poison(r, ranks[r].recv, count);
      }
      auto launch = [&](int r) {
        Rank& k = ranks[r];
        if (op == "allreduce") {
          NCCL_OK(ncclAllReduce(k.send, k.recv, count, ncclFloat, ncclSum, k.comm, k.stream));
        } else if (op == "allgather") {
          NCCL_OK(ncclAllGather(k.send, k.recv, perRank, ncclFloat, k.comm, k.stream));
        } else {  // both directions at once
          int peer = 1 - r;
          NCCL_OK(ncclSend(k.send, count, ncclFloat, peer, k.comm, k.stream));
          NCCL_OK(ncclRecv(k.recv, count, ncclFloat, peer, k.comm, k.stream));
        }
      };
      if (op != "allreduce" && op != "allgather" && op != "sendrecv") {
        std::fprintf(stderr, "nccl-driver: unknown op %s\n", op.c_str());
        return 2;
      }
      timeOp(ranks, 1, launch);  // the checked run
      bool ok = true;
      for (int r = 0; r < kRanks && ok; r++) {
        std::vector<float> out = download(r, ranks[r].recv, count);
        for (size_t i = 0; i < count && ok; i++) {
          float want;
          if (op == "allreduce")
            want = valueAt(0, i) + valueAt(1, i);
          else if (op == "allgather")
            want = valueAt(int(i / perRank), i % perRank);
          else
            want = valueAt(1 - r, i);
          if (out[i] != want) {
            std::fprintf(stderr, "%s %zu bytes: rank %d element %zu is %g, expected %g\n",
                         op.c_str(), bytes, r, i, double(out[i]), double(want));
            ok = false;
          }
        }
      }
      if (o.warmup > 0) timeOp(ranks, o.warmup, launch);
      double us = timeOp(ranks, o.iters, launch);
      double algbw = double(bytes) / us / 1e3;  // GB/s
      double factor = op == "allreduce"   ? 2.0 * (kRanks - 1) / kRanks
                      : op == "allgather" ? double(kRanks - 1) / kRanks
                                          : 1.0;
      std::printf("%-10s %12zu %12.1f %12.3f %12.3f %6s\n", op.c_str(), bytes, us, algbw,
                  algbw * factor, ok ? "ok" : "FAIL");
      std::printf("RESULT %s %zu %.1f %.4f %.4f %s\n", op.c_str(), bytes, us, algbw, algbw * factor,
                  ok ? "ok" : "FAIL");
      allOk = allOk && ok;
    }
  }
  for (int r = 0; r < kRanks; r++) {
    CUDA_OK(cudaSetDevice(r));
    CUDA_OK(cudaFree(ranks[r].send));
    CUDA_OK(cudaFree(ranks[r].recv));
    CUDA_OK(cudaEventDestroy(ranks[r].start));
    CUDA_OK(cudaEventDestroy(ranks[r].stop));
    CUDA_OK(cudaStreamDestroy(ranks[r].stream));
    NCCL_OK(ncclCommDestroy(ranks[r].comm));
  }
  std::printf("SUMMARY %s\n", allOk ? "ok" : "FAIL");
  return allOk ? 0 : 1;
}
