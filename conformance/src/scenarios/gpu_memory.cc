// SPDX-License-Identifier: Apache-2.0
// GPU memory: registration of cuMemAlloc'd buffers with regMr(NCCL_PTR_CUDA)
// and with regMrDmaBuf (an fd from cuMemGetHandleForAddressRange, closed
// right after the call, as NCCL does), and data into and out of GPU memory,
// every byte checked after iflush. The CUDA driver is opened at run time;
// without it, or when the plugin does not advertise the pointer type, each
// scenario is NotRun with the reason (its requirements, in the catalogue).
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "ncclnet/cuda_driver.hpp"
#include "scenario/gpu_buffer.hpp"
#include "scenario/registrations.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

namespace cu = ncclnet::cuda;

// regMrDmaBuf of [offset, offset + length) of `buf`, with the fd closed
// right after the call, as NCCL closes it.
void* regDmaBuf(Ctx& c, const cu::Driver& driver, void* comm, GpuBuffer& buf, size_t offset,
                size_t length) {
  uint64_t fdOffset = 0;
  int fd = buf.exportPages(driver, offset, length, &fdOffset);
  void* mh = nullptr;
  try {
    mh = c.regDmaBuf(comm, buf.data() + offset, length, fdOffset, fd);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  return mh;
}

// What the receiver does after a receive into GPU memory completed: NCCL's
// flush (only when bytes arrived), which must be NULL or complete.
void flush(Ctx& c, void* recvComm, void* data, int size, void* mh, const std::string& what) {
  if (size <= 0) return;  // NCCL skips the flush of an empty receive
  void* request = reinterpret_cast<void*>(0xdead);
  c.activity("iflush(" + what + ")");
  CONF_OK(c.net().iflush(recvComm, 1, &data, &size, &mh, &request), Rule::FlushMakesVisible,
          "iflush(" + what + ")");
  CONF_EXPECT(request != reinterpret_cast<void*>(0xdead), Rule::FlushMakesVisible,
              "iflush(%s) returned without writing *request", what.c_str());
  if (request == nullptr) {
    CONF_EXPECT(!c.props().forceFlush, Rule::ForceFlushHonoured,
                "forceFlush is 1, yet iflush(%s) returned a NULL request: nothing was flushed",
                what.c_str());
    return;
  }
  CONF_OK(c.wait(request, nullptr, "test(flush of " + what + ", sizes = NULL)",
                 Rule::FlushMakesVisible),
          Rule::FlushMakesVisible, "test(flush of " + what + ")");
}

// One message from rank 0 to rank 1; either side's buffer is host memory
// (nullptr) or the given GPU buffer and handle. The receiver flushes and
// checks every byte, and that nothing outside the message changed.
void transfer(Ctx& c, void* comm, GpuBuffer* gpuSend, void* sendMh, GpuBuffer* gpuRecv,
              void* recvMh, size_t offset, size_t size, uint64_t seed) {
  std::string what = format("%zu B, %s to %s at offset %zu", size, gpuSend ? "GPU" : "host",
                            gpuRecv ? "GPU" : "host", offset);
  if (c.rank() == 0) {
    Buffer host(gpuSend ? 0 : size);
    char* data = gpuSend ? gpuSend->data() + offset : host.data();
    if (gpuSend)
      gpuSend->fill(seed, offset, size);
    else
      host.fill(seed);
    void* mh = gpuSend ? sendMh : c.reg(comm, host.data(), size);
    void* r = c.isend(comm, data, size, 0, mh, what);
    int sent = -1;
    CONF_OK(c.wait(r, &sent, "isend " + what), Rule::CompletionReportsSizes,
            "test(isend " + what + ")");
    if (!gpuSend) c.dereg(comm, mh);
    return;
  }
  Buffer host(gpuRecv ? 0 : size);
  if (gpuRecv)
    gpuRecv->clear(0);
  else
    host.clear(0);
  char* data = gpuRecv ? gpuRecv->data() + offset : host.data();
  void* mh = gpuRecv ? recvMh : c.reg(comm, host.data(), size);
  size_t capacity = size;
  int tag = 0;
  void* r = c.irecv(comm, 1, reinterpret_cast<void**>(&data), &capacity, &tag, &mh, what);
  int received = -1;
  CONF_OK(c.wait(r, &received, "irecv " + what), Rule::CompletionReportsSizes,
          "test(irecv " + what + ")");
  CONF_EXPECT(received == static_cast<int>(size), Rule::CompletionReportsSizes,
              "the receive of %s completed with %d B", what.c_str(), received);
  if (gpuRecv) {
    flush(c, comm, data, received, mh, what);
    size_t bad = gpuRecv->verify(seed, offset, size);
    CONF_EXPECT(bad == Buffer::kMismatch, Rule::FlushMakesVisible,
                "after the flush, byte %zu of the %s message in GPU memory is wrong", bad,
                what.c_str());
    size_t where = 0;
    CONF_EXPECT(gpuRecv->untouched(0, 0, offset, &where) &&
                    gpuRecv->untouched(0, offset + size, gpuRecv->size() - offset - size, &where),
                Rule::TruncationIsAnError,
                "the %s receive wrote GPU memory at offset %zu, outside the message", what.c_str(),
                where);
    long guard = 0;
    CONF_EXPECT(gpuRecv->guardsIntact(&guard), Rule::TruncationIsAnError,
                "the %s receive wrote GPU memory at offset %ld, outside the buffer", what.c_str(),
                guard);
  } else {
    size_t bad = host.verify(seed, 0, size);
    CONF_EXPECT(bad == Buffer::kMismatch, Rule::CompletionReportsSizes,
                "byte %zu of the %s message is wrong", bad, what.c_str());
    c.dereg(comm, mh);
  }
}

size_t largestSize(const Ctx& c) {
  size_t largest = 0;
  for (size_t s : c.profile().sizes) largest = std::max(largest, s);
  return largest;
}

void registerCuda(Ctx& c) {
  const cu::Driver& driver = cu::Driver::get();
  void* comm = c.link(0, 1, "connection");
  constexpr size_t kSize = 8 << 20;
  GpuBuffer buf(c, driver, kSize), other(c, driver, 4096);
  void* whole = c.regCuda(comm, buf.data(), kSize);
  void* again = c.regCuda(comm, buf.data(), kSize);  // twice: two handles
  void* part = c.regCuda(comm, buf.data() + 4097, 65539);
  void* oneByte = c.regCuda(comm, buf.data() + 1, 1);
  void* small = c.regCuda(comm, other.data(), 4096);
  registerThenDeregister(
      c, comm, 64,
      [&](int i) {
        size_t offset = static_cast<size_t>(i) * 3 * 4096 + static_cast<size_t>(i);
        return c.regCuda(comm, buf.data() + offset, 4096 + 17 * static_cast<size_t>(i));
      },
      25);
  for (void* mh : {again, oneByte, small, part}) c.dereg(comm, mh);
  // Still usable after all that: a message into the whole buffer's handle
  // at an unaligned offset.
  transfer(c, comm, nullptr, nullptr, c.rank() == 1 ? &buf : nullptr, whole, 4097, 65539, 2501);
  c.barrier("transfer done");
  c.dereg(comm, whole);
}

void registerDmaBuf(Ctx& c) {
  const cu::Driver& driver = cu::Driver::get();
  void* comm = c.link(0, 1, "connection");
  constexpr size_t kSize = 4 << 20;
  GpuBuffer buf(c, driver, kSize);
  void* whole = regDmaBuf(c, driver, comm, buf, 0, kSize);
  void* part = regDmaBuf(c, driver, comm, buf, 4097, 65539);
  registerThenDeregister(c, comm, 16, [&](int i) {
    return regDmaBuf(c, driver, comm, buf, static_cast<size_t>(i) * 65536 + 3, 4096 + 1);
  });
  // Every fd is closed by now: the registrations must not depend on them.
  transfer(c, comm, nullptr, nullptr, c.rank() == 1 ? &buf : nullptr, part, 4097, 65539, 2601);
  c.barrier("sub-range transfer done");
  transfer(c, comm, nullptr, nullptr, c.rank() == 1 ? &buf : nullptr, whole, 0, kSize, 2602);
  c.barrier("whole-buffer transfer done");
  c.dereg(comm, part);
  c.dereg(comm, whole);
}

void hostToGpu(Ctx& c) {
  const cu::Driver& driver = cu::Driver::get();
  void* comm = c.link(0, 1, "connection");
  size_t largest = largestSize(c);
  std::unique_ptr<GpuBuffer> buf;
  void* mh = nullptr;
  if (c.rank() == 1) {
    buf = std::make_unique<GpuBuffer>(c, driver, largest + 4097);
    mh = c.regCuda(comm, buf->data(), buf->size());
  }
  uint64_t seed = 3600;
  for (size_t size : c.profile().sizes) {
    transfer(c, comm, nullptr, nullptr, buf.get(), mh, 0, size, seed++);
    transfer(c, comm, nullptr, nullptr, buf.get(), mh, 4097, size, seed++);
  }
  c.barrier("every size received");
  if (mh != nullptr) c.dereg(comm, mh);
}

void gpuToHost(Ctx& c) {
  const cu::Driver& driver = cu::Driver::get();
  void* comm = c.link(0, 1, "connection");
  size_t largest = largestSize(c);
  std::unique_ptr<GpuBuffer> buf;
  void* mh = nullptr;
  if (c.rank() == 0) {
    buf = std::make_unique<GpuBuffer>(c, driver, largest + 4097);
    mh = c.regCuda(comm, buf->data(), buf->size());
  }
  uint64_t seed = 3500;
  for (size_t size : c.profile().sizes) {
    transfer(c, comm, buf.get(), mh, nullptr, nullptr, 0, size, seed++);
    transfer(c, comm, buf.get(), mh, nullptr, nullptr, 4097, size, seed++);
  }
  c.barrier("every size sent");
  if (mh != nullptr) c.dereg(comm, mh);
}

void gpuToGpuDmaBuf(Ctx& c) {
  const cu::Driver& driver = cu::Driver::get();
  void* comm = c.link(0, 1, "connection");
  size_t size = std::max<size_t>(largestSize(c), 1);
  GpuBuffer buf(c, driver, size);
  void* mh = regDmaBuf(c, driver, comm, buf, 0, size);
  for (int i = 0; i < c.profile().iterations; i++) {
    transfer(c, comm, c.rank() == 0 ? &buf : nullptr, mh, c.rank() == 1 ? &buf : nullptr, mh, 0,
             size, 2650 + static_cast<uint64_t>(i));
  }
  c.barrier("every iteration received");
  c.dereg(comm, mh);
}

void consumedAfterGpuUse(Ctx& c) {
  const cu::Driver& driver = cu::Driver::get();
  if (!c.net().provides(ncclnet::host::Optional::IrecvConsumed))
    skip("irecvConsumed is NULL (optional)");
  void* comm = c.link(0, 1, "connection");
  constexpr size_t kSize = 65536;
  // More than a comm's 32 requests: a request irecvConsumed fails to
  // release (or releases twice) shows.
  constexpr int kCount = 2 * NCCL_NET_MAX_REQUESTS + 3;
  if (c.rank() == 0) {
    for (int i = 0; i < kCount; i++) c.transfer(comm, 0, 1, kSize, 3700 + i);
    return;
  }
  GpuBuffer buf(c, driver, kSize);
  void* mh = c.regCuda(comm, buf.data(), kSize);
  for (int i = 0; i < kCount; i++) {
    std::string what = format("GPU receive #%d", i);
    buf.clear(0);
    void* data = buf.data();
    size_t capacity = kSize;
    int tag = 0;
    void* r = c.irecv(comm, 1, &data, &capacity, &tag, &mh, what);
    int size = -1;
    CONF_OK(c.wait(r, &size, what), Rule::CompletionReportsSizes, "test(" + what + ")");
    flush(c, comm, data, size, mh, what);
    // The consumer (here the host, through a copy) has the data ...
    CONF_EXPECT(buf.verify(3700 + i, 0, kSize) == Buffer::kMismatch, Rule::FlushMakesVisible,
                "%s holds wrong bytes after the flush", what.c_str());
    // ... so NCCL hands the request back.
    c.activity("irecvConsumed(" + what + ")");
    CONF_OK(c.net().irecvConsumed(comm, 1, r), Rule::IrecvConsumedAccepted,
            "irecvConsumed(" + what + ")");
  }
  c.dereg(comm, mh);
}

}  // namespace

void addGpuMemoryScenarios(std::vector<Scenario>& out) {
  out.push_back({.area = "GpuMemory",
                 .name = "RegisterCudaMemory",
                 .rule = Rule::RegMrHostAndCuda,
                 .ranks = 2,
                 .needs = {.cudaMemory = true},
                 .run = registerCuda,
                 .summary =
                     "regMr(NCCL_PTR_CUDA) of cuMemAlloc'd memory: whole, twice, sub-ranges, 1 B, "
                     "64 handles; then data through the whole buffer's handle"});
  out.push_back({.area = "GpuMemory",
                 .name = "RegisterDmaBuf",
                 .rule = Rule::RegMrDmaBuf,
                 .ranks = 2,
                 .needs = {.dmaBuf = true},
                 .run = registerDmaBuf,
                 .summary =
                     "regMrDmaBuf with cuMemGetHandleForAddressRange fds (closed at once): whole, "
                     "sub-ranges at unaligned offsets; data through them"});
  out.push_back(
      {.area = "GpuMemory",
       .name = "HostToGpuVerifiedAfterFlush",
       .rule = Rule::FlushMakesVisible,
       .ranks = 2,
       .needs = {.cudaMemory = true},
       .run = hostToGpu,
       .summary = "each size of data.sizes into GPU memory (aligned and at offset 4097), iflush, "
                  "every byte copied back and checked"});
  out.push_back(
      {.area = "GpuMemory",
       .name = "GpuToHost",
       .rule = Rule::CompletionReportsSizes,
       .ranks = 2,
       .needs = {.cudaMemory = true},
       .run = gpuToHost,
       .summary = "each size of data.sizes from GPU memory into host memory, every byte checked"});
  out.push_back({.area = "GpuMemory",
                 .name = "GpuToGpuThroughDmaBuf",
                 .rule = Rule::RegMrDmaBuf,
                 .ranks = 2,
                 .needs = {.dmaBuf = true},
                 .run = gpuToGpuDmaBuf,
                 .summary =
                     "the largest size between GPU buffers registered through DMA-BUF, flushed, "
                     "checked"});
  out.push_back({.area = "GpuMemory",
                 .name = "IrecvConsumedAfterGpuUse",
                 .rule = Rule::IrecvConsumedAccepted,
                 .ranks = 2,
                 .needs = {.minAbi = 7, .cudaMemory = true},
                 .run = consumedAfterGpuUse,
                 .summary = "GPU receives flushed, consumed, then irecvConsumed (when provided)"});
}

}  // namespace conformance
