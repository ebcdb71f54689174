// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the CUDA device peer, host side —
// resolving works into descriptors, one kernel per launch on the peer's
// stream, completions, and stopping kernels on destruction.
#include "ncclnet/transport/cuda_device_peer.hpp"

#include <cstddef>
#include <map>
#include <mutex>
#include <thread>

#include "kernel_abi.hpp"
#include "launch_record.hpp"
#include "ncclnet/transport/steps.hpp"
#include "runtime_util.hpp"
#include "work_report.hpp"

namespace ncclnet::transport {

using namespace cuda_peer;  // NOLINT: this file is the peer's host side
using Clock = std::chrono::steady_clock;

namespace {
// How long destruction waits for stopped kernels to leave (they poll the
// stop word every few microseconds).
constexpr auto kDrainBound = std::chrono::seconds(30);
constexpr int kMinRecordCapacity = 64;
}  // namespace

class CudaDevicePeer::Impl {
 public:
  Impl(int dev, Logger logger) : device(dev), log(logger) {}
  ~Impl();

  LaunchRecord* acquire(int works, std::string* why);
  void release(LaunchRecord* record);
  // Sets every stop word and waits (bounded) for the stream to drain.
  void stopAll();
  // Whether the GPU can reach `p` (mapped host memory, or its own memory).
  bool reachable(const void* p) const;

  const int device;
  const Logger log;
  cudaStream_t stream = nullptr;
  int resident = 0;             // blocks of the kernel that fit at once
  bool pageableAccess = false;  // the GPU reaches plain host memory (HMM/ATS)

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<LaunchRecord>> records_;
  bool leak_ = false;  // kernels did not stop: their memory must stay
};

CudaDevicePeer::Impl::~Impl() {
  ScopedDevice scope(device);
  if (leak_) {
    for (auto& r : records_) (void)r.release();
    return;
  }
  records_.clear();
  if (stream != nullptr) cudaStreamDestroy(stream);
}

LaunchRecord* CudaDevicePeer::Impl::acquire(int works, std::string* why) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& r : records_) {
    if (!r->claimed && r->capacity() >= works && cudaEventQuery(r->done()) == cudaSuccess) {
      r->claimed = true;
      return r.get();
    }
  }
  auto r = LaunchRecord::create(works > kMinRecordCapacity ? works : kMinRecordCapacity, why);
  if (!r) return nullptr;
  r->claimed = true;
  records_.push_back(std::move(r));
  return records_.back().get();
}

void CudaDevicePeer::Impl::release(LaunchRecord* record) {
  std::lock_guard<std::mutex> lock(mutex_);
  record->claimed = false;
}

void CudaDevicePeer::Impl::stopAll() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // A sequentially consistent store leaves the CPU's store buffer at once,
    // so kernels polling the word stop without waiting for other traffic.
    for (auto& r : records_) {
      __atomic_store_n(r->stop(), kStopPeer, __ATOMIC_SEQ_CST);
    }
  }
  ScopedDevice scope(device);
  auto deadline = Clock::now() + kDrainBound;
  cudaError_t err = cudaStreamQuery(stream);
  while (err == cudaErrorNotReady && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    err = cudaStreamQuery(stream);
  }
  if (err == cudaErrorNotReady) {
    NCCLNET_WARN(log,
                 "device %d: kernels still running %lld s after they were told to stop; "
                 "their memory stays allocated",
                 device,
                 static_cast<long long>(
                     std::chrono::duration_cast<std::chrono::seconds>(kDrainBound).count()));
    std::lock_guard<std::mutex> lock(mutex_);
    leak_ = true;
  }
}

bool CudaDevicePeer::Impl::reachable(const void* p) const {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky; do not let a later call report it
    return pageableAccess;
  }
  switch (attr.type) {
    case cudaMemoryTypeHost:
    case cudaMemoryTypeManaged: return true;
    case cudaMemoryTypeDevice: return attr.device == device;
    default: return pageableAccess;
  }
}

namespace {

class CudaCompletion final : public DeviceCompletion {
 public:
  CudaCompletion(std::shared_ptr<CudaDevicePeer::Impl> peer, LaunchRecord* record)
      : peer_(std::move(peer)), record_(record) {}
  ~CudaCompletion() override {
    if (record_ != nullptr) peer_->release(record_);
  }

  ncclResult_t wait(std::chrono::milliseconds timeout, std::string* detail) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!finished_ && !poll(timeout, detail)) return ncclTimeout;
    if (detail != nullptr) *detail = detail_;
    return result_;
  }

 private:
  // True once the kernel finished (outcome cached); false on `timeout`.
  bool poll(std::chrono::milliseconds timeout, std::string* detail) {
    ScopedDevice scope(peer_->device);
    auto deadline = Clock::now() + timeout;
    cudaError_t err = cudaEventQuery(record_->done());
    while (err == cudaErrorNotReady) {
      if (Clock::now() >= deadline) {
        if (detail != nullptr) {
          *detail = "device work still running (the kernel's own deadline has not passed): " +
                    describeRunning(record_->descs, record_->status());
        }
        return false;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      err = cudaEventQuery(record_->done());
    }
    finished_ = true;
    if (err != cudaSuccess) {
      result_ = ncclUnhandledCudaError;
      detail_ = "the device works' kernel failed: " + describe(err) + "; " +
                describeRunning(record_->descs, record_->status());
    } else {
      LaunchOutcome o = summarize(record_->descs, record_->status());
      result_ = o.result;
      detail_ = std::move(o.detail);
    }
    if (result_ != ncclSuccess) NCCLNET_WARN(peer_->log, "%s", detail_.c_str());
    return true;
  }

  std::shared_ptr<CudaDevicePeer::Impl> peer_;
  LaunchRecord* record_;
  std::mutex mutex_;
  bool finished_ = false;
  ncclResult_t result_ = ncclSuccess;
  std::string detail_;
};

class DoneCompletion final : public DeviceCompletion {
 public:
  ncclResult_t wait(std::chrono::milliseconds, std::string* detail) override {
    if (detail != nullptr) detail->clear();
    return ncclSuccess;
  }
};

// A work as the kernel sees it: device addresses of the connection's words
// and buffer, and where its steps start.
WorkDesc describeForKernel(const DeviceWork& work, int workIndex, uint64_t startStep) {
  const DeviceConnection& c = *work.connection;
  const int p = index(work.protocol);
  char* sendMem = reinterpret_cast<char*>(c.sendMem);
  char* recvMem = reinterpret_cast<char*>(c.recvMem);
  return WorkDesc{.head = reinterpret_cast<uint64_t*>(sendMem + offsetof(SendMem, head)),
                  .tail = reinterpret_cast<uint64_t*>(recvMem + offsetof(RecvMem, tail)),
                  .fifoSize = reinterpret_cast<int64_t*>(recvMem + offsetof(RecvMem, connFifo) +
                                                         offsetof(ConnFifoEntry, size)),
                  .fifoOffset = reinterpret_cast<int32_t*>(recvMem + offsetof(RecvMem, connFifo) +
                                                           offsetof(ConnFifoEntry, offset)),
                  .fifoStride = sizeof(ConnFifoEntry),
                  .buff = c.buffs[p],
                  .userBuffer = work.userBuffer,
                  .unpack = c.hasNetDeviceHandle &&
                                    c.netDeviceHandle.netDeviceType == NCCL_NET_DEVICE_UNPACK &&
                                    work.protocol == Protocol::Simple
                                ? c.netDeviceHandle.handle
                                : nullptr,
                  .stepSize = c.stepSize[p],
                  .startStep = startStep,
                  .nbytes = work.nbytes,
                  .capacity = work.sliceCapacity,
                  .seed = work.seed,
                  .send = c.direction == Direction::Send ? 1 : 0,
                  .protocol = p,
                  .sliceSteps = work.sliceSteps,
                  .offsetMode = c.offsetMode && work.protocol == Protocol::Simple ? 1 : 0,
                  .verify = work.mode == DataMode::Verify ? 1 : 0,
                  .work = workIndex};
}

}  // namespace

ncclResult_t CudaDevicePeer::create(int device, std::unique_ptr<CudaDevicePeer>* out,
                                    std::string* why, Logger logger) {
  ncclResult_t usable = checkDevice(device, why);
  if (usable != ncclSuccess) return usable;
  ScopedDevice scope(device);
  if (scope.error() != cudaSuccess) {
    *why = "cudaSetDevice(" + std::to_string(device) + "): " + describe(scope.error());
    return ncclSystemError;
  }
  auto impl = std::make_shared<Impl>(device, logger);
  int canMap = 0, pageable = 0;
  cudaError_t err = cudaDeviceGetAttribute(&canMap, cudaDevAttrCanMapHostMemory, device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device);
  if (err != cudaSuccess || canMap == 0) {
    *why = "CUDA device " + std::to_string(device) + " cannot map host memory" +
           (err != cudaSuccess ? ": " + describe(err) : "");
    return ncclSystemError;
  }
  impl->pageableAccess = pageable != 0;
  err = residentBlocks(device, &impl->resident);
  if (err != cudaSuccess) {
    *why = "the device peer's kernel cannot run on CUDA device " + std::to_string(device) +
           " (built for CMAKE_CUDA_ARCHITECTURES without this GPU?): " + describe(err);
    return ncclSystemError;
  }
  err = cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking);
  if (err != cudaSuccess) {
    *why = "cudaStreamCreateWithFlags: " + describe(err);
    return ncclSystemError;
  }
  out->reset(new CudaDevicePeer(std::move(impl)));
  return ncclSuccess;
}

CudaDevicePeer::CudaDevicePeer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

CudaDevicePeer::~CudaDevicePeer() {
  impl_->stopAll();
}

int CudaDevicePeer::device() const {
  return impl_->device;
}

ncclResult_t CudaDevicePeer::launch(std::vector<DeviceWork> works,
                                    std::chrono::milliseconds timeout,
                                    std::shared_ptr<DeviceCompletion>* out) {
  Impl& peer = *impl_;
  // One block per connection, its works in launch order.
  std::vector<DeviceConnection*> order;
  std::map<DeviceConnection*, std::vector<int>> byConnection;
  for (size_t i = 0; i < works.size(); i++) {
    const DeviceWork& w = works[i];
    if (w.connection == nullptr || w.sliceCapacity == 0 || w.sliceSteps < 1 ||
        w.connection->buffs[index(w.protocol)] == nullptr ||
        (w.userBuffer != nullptr && (w.protocol != Protocol::Simple || w.sliceSteps != 1))) {
      return ncclInvalidArgument;
    }
    auto& list = byConnection[w.connection];
    if (list.empty()) order.push_back(w.connection);
    list.push_back(static_cast<int>(i));
  }
  if (works.empty()) {
    *out = std::make_shared<DoneCompletion>();
    return ncclSuccess;
  }
  if (static_cast<int>(order.size()) > peer.resident) {
    NCCLNET_WARN(peer.log,
                 "a launch on %zu connections needs %zu blocks resident at once; CUDA device %d "
                 "holds %d",
                 order.size(), order.size(), peer.device, peer.resident);
    return ncclInvalidUsage;
  }
  ScopedDevice scope(peer.device);
  for (DeviceConnection* c : order) {
    for (const void* p :
         {static_cast<const void*>(c->sendMem), static_cast<const void*>(c->recvMem)}) {
      if (!peer.reachable(p)) {
        NCCLNET_WARN(peer.log,
                     "connection memory at %p is not reachable from CUDA device %d: build the "
                     "Transport with a CudaMemoryProvider on that device",
                     p, peer.device);
        return ncclInvalidUsage;
      }
    }
  }
  for (const DeviceWork& w : works) {
    char* buffer = w.userBuffer != nullptr ? w.userBuffer : w.connection->buffs[index(w.protocol)];
    if (!peer.reachable(buffer)) {
      NCCLNET_WARN(peer.log, "%s %s buffer at %p is not reachable from CUDA device %d",
                   protocolName(w.protocol), w.userBuffer != nullptr ? "user" : "step",
                   static_cast<void*>(buffer), peer.device);
      return ncclInvalidUsage;
    }
  }

  std::string why;
  LaunchRecord* record = peer.acquire(static_cast<int>(works.size()), &why);
  if (record == nullptr) {
    NCCLNET_WARN(peer.log, "%s", why.c_str());
    return ncclSystemError;
  }
  record->reset(static_cast<int>(works.size()));
  // The kernel's step counters advance here, in launch order: each work
  // starts where the previous one on its connection ends, rounded up.
  for (size_t i = 0; i < works.size(); i++) {
    const DeviceWork& w = works[i];
    DeviceConnection& c = *w.connection;
    uint64_t start = roundUp(c.step, static_cast<uint64_t>(w.chunkSteps));
    c.step = start + sliceCount(w.nbytes, w.sliceCapacity) * static_cast<uint64_t>(w.sliceSteps);
    record->descs.push_back(describeForKernel(w, static_cast<int>(i), start));
  }
  int at = 0;
  for (size_t g = 0; g < order.size(); g++) {
    record->groupStart()[g] = at;
    for (int i : byConnection[order[g]]) record->works()[at++] = record->descs[i];
  }
  // No fence before the launch: CUDA makes host writes to pinned memory made
  // before a launch visible to the kernel it launches.
  record->groupStart()[order.size()] = at;

  uint64_t timeoutNs =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count());
  cudaError_t err =
      launchDeviceWorks(record->args(timeoutNs), static_cast<int>(order.size()), peer.stream);
  if (err == cudaSuccess) err = cudaEventRecord(record->done(), peer.stream);
  if (err != cudaSuccess) {
    peer.release(record);
    NCCLNET_WARN(peer.log, "launching %zu device works on CUDA device %d: %s", works.size(),
                 peer.device, describe(err).c_str());
    return ncclUnhandledCudaError;
  }
  *out = std::make_shared<CudaCompletion>(impl_, record);
  return ncclSuccess;
}

}  // namespace ncclnet::transport
