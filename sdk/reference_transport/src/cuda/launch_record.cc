// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: a launch's host-mapped
// memory.
#include "launch_record.hpp"

#include <cstring>

#include "runtime_util.hpp"

namespace ncclnet::transport::cuda_peer {

namespace {
size_t align128(size_t v) {
  return (v + 127) / 128 * 128;
}
}  // namespace

std::unique_ptr<LaunchRecord> LaunchRecord::create(int capacity, std::string* why) {
  std::unique_ptr<LaunchRecord> r(new LaunchRecord());
  r->capacity_ = capacity;
  r->groupsAt_ = 128;  // the stop word has its own line: the kernel polls it
  r->worksAt_ = align128(r->groupsAt_ + sizeof(int32_t) * (capacity + 1));
  r->statusAt_ = align128(r->worksAt_ + sizeof(WorkDesc) * capacity);
  r->bytes_ = align128(r->statusAt_ + sizeof(WorkStatus) * capacity);
  void* host = nullptr;
  cudaError_t err = cudaHostAlloc(&host, r->bytes_, cudaHostAllocMapped | cudaHostAllocPortable);
  if (err != cudaSuccess) {
    *why = "cudaHostAlloc for a launch record: " + describe(err);
    return nullptr;
  }
  r->host_ = static_cast<char*>(host);
  std::memset(r->host_, 0, r->bytes_);
  void* device = nullptr;
  err = cudaHostGetDevicePointer(&device, host, 0);
  if (err == cudaSuccess) err = cudaEventCreateWithFlags(&r->done_, cudaEventDisableTiming);
  if (err != cudaSuccess) {
    *why = "mapping a launch record: " + describe(err);
    return nullptr;  // the destructor frees what was made
  }
  r->device_ = static_cast<char*>(device);
  r->descs.reserve(capacity);
  return r;
}

LaunchRecord::~LaunchRecord() {
  if (done_ != nullptr) cudaEventDestroy(done_);
  if (host_ != nullptr) cudaFreeHost(host_);
}

LaunchArgs LaunchRecord::args(uint64_t timeoutNs) const {
  return LaunchArgs{.works = reinterpret_cast<const WorkDesc*>(device_ + worksAt_),
                    .groupStart = reinterpret_cast<const int32_t*>(device_ + groupsAt_),
                    .status = reinterpret_cast<WorkStatus*>(device_ + statusAt_),
                    .stop = reinterpret_cast<int32_t*>(device_),
                    .timeoutNs = timeoutNs};
}

void LaunchRecord::reset(int works) {
  *stop() = kKeepGoing;
  std::memset(status(), 0, sizeof(WorkStatus) * works);  // kQueued, waiting for nothing
  descs.clear();
}

}  // namespace ncclnet::transport::cuda_peer
