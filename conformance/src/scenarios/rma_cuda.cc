// SPDX-License-Identifier: Apache-2.0
// RMA over GPU memory, as NCCL's GIN proxy uses the table: every symmetric
// window and the proxy's signals are CUDA memory (src/gin/gin_host_proxy.cc
// ncclGinProxyCreateContext and ncclGinProxyRegister register them with
// NCCL_PTR_CUDA), and an inline put (putValue, up to 8 B) comes from the
// proxy's `inlines` array in host memory (NCCL_PTR_HOST). The bytes are
// read through the CUDA driver only, as the GPU would see them. The CUDA
// memory requirement takes the GPU; the RMA table's own ptrSupport says
// whether it moves GPU memory (NotRun when it does not).
#include <cstring>
#include <vector>

#include "harness/wire.hpp"
#include "ncclnet/cuda_driver.hpp"
#include "scenario/gpu_buffer.hpp"
#include "scenario/registry.hpp"
#include "scenario/rma_session.hpp"

namespace conformance {

namespace {

namespace cu = ncclnet::cuda;

const cu::Driver& gpuOf(const RmaSession& s) {
  if (!(s.props().ptrSupport & NCCL_PTR_CUDA))
    skip("the RMA table does not advertise NCCL_PTR_CUDA (ptrSupport 0x%x)", s.props().ptrSupport);
  return cu::Driver::get();
}

uint64_t seedOf(int src, int dst, size_t item) {
  return rmaSeed(0xc0da0000ull, src, dst, item);
}

// Inline sizes from host memory, then GPU sources up to past 1 MiB (a
// plugin that stages GPU memory in pieces moves more than one).
const std::vector<size_t> kSizes = {1, 3, 8, 0, 4096, 65536 + 3, (1 << 20) + 5};
constexpr size_t kInlineMax = 8;

size_t offsetOf(size_t index) {
  size_t off = 1;
  for (size_t i = 0; i < index; i++) off += kSizes[i] + 3;
  return off;
}
const size_t kSlot = offsetOf(kSizes.size()) + 8;

// Every size to every rank and itself at odd offsets, the last put with a
// strong ADD of (sender + 1) and then a signal-only INC, as NCCL's
// put(..., SignalAdd) and signal() send them; the target's signals are in
// GPU memory. Visible signal => payload there; sums exact; nothing outside.
void cudaPutsLand(Ctx& c) {
  Rule rule = Rule::RmaPutsLand;
  RmaSession s(c, 1, rule);
  const cu::Driver& driver = gpuOf(s);
  int n = c.nranks(), me = c.rank();
  GpuBuffer target(c, driver, kSlot * static_cast<size_t>(n) + 4096 * static_cast<size_t>(me));
  GpuBuffer signals(c, driver, 8 * static_cast<size_t>(n));
  GpuBuffer source(c, driver, kSlot);
  Buffer inlines(kInlineMax);
  target.clear(0xEE);
  signals.clear(0);
  void* mTarget = s.reg(target.data(), target.size(), rule, NCCL_PTR_CUDA);
  void* mSignals = s.reg(signals.data(), signals.size(), rule, NCCL_PTR_CUDA);
  void* mSource = s.reg(source.data(), source.size(), rule, NCCL_PTR_CUDA);
  void* mInlines = s.reg(inlines.data(), inlines.size(), rule);
  c.barrier("registered");
  for (int dst = 0; dst < n; dst++) {
    std::vector<void*> requests;
    for (size_t i = 0; i < kSizes.size(); i++) {
      size_t size = kSizes[i];
      bool inline_ = size > 0 && size <= kInlineMax;
      uint64_t at = kSlot * static_cast<uint64_t>(me) + offsetOf(i);
      std::string what =
          format("%zu B of %s memory to rank %d", size, inline_ ? "host" : "GPU", dst);
      if (inline_) {
        // One put in flight from the inline array at a time, as each of
        // NCCL's inline slots holds one value.
        inlines.fill(seedOf(me, dst, i), 0, size);
        s.wait(s.put(0, 0, mInlines, size, at, mTarget, dst, what, rule), what, rule);
        continue;
      }
      source.fill(seedOf(me, dst, i), offsetOf(i), size);
      bool last = i + 1 == kSizes.size();
      requests.push_back(last ? s.putSignal(0, offsetOf(i), mSource, size, at, mTarget, dst,
                                            8 * static_cast<uint64_t>(me), mSignals,
                                            static_cast<uint64_t>(me) + 1, NCCL_GIN_SIGNAL_OP_ADD,
                                            true, what + " with a signal", rule)
                              : s.put(0, offsetOf(i), mSource, size, at, mTarget, dst, what, rule));
    }
    for (void* r : requests) s.wait(r, format("a put to rank %d", dst), rule);
    s.signal(0, dst, 8 * static_cast<uint64_t>(me), mSignals, format("signal to rank %d", dst),
             rule);
  }
  for (int src = 0; src < n; src++) {
    size_t word = 8 * static_cast<size_t>(src);
    uint64_t expected = static_cast<uint64_t>(src) + 2;
    uint64_t seen = s.awaitSignal([&] { return signals.word(word); }, expected,
                                  format("rank %d's signals in GPU memory", src), rule);
    CONF_EXPECT(seen == expected, Rule::RmaSignalsExact,
                "rank %d's ADD %d and INC left %llu in GPU memory, expected %llu", src, src + 1,
                static_cast<unsigned long long>(seen), static_cast<unsigned long long>(expected));
    for (size_t i = 0; i < kSizes.size(); i++) {
      size_t at = kSlot * static_cast<size_t>(src) + offsetOf(i);
      size_t bad = target.verify(seedOf(src, me, i), at, kSizes[i]);
      CONF_EXPECT(bad == Buffer::kMismatch, rule,
                  "the %zu B put from rank %d into GPU memory differs at byte %zu (target offset "
                  "%zu) once its signal was visible",
                  kSizes[i], src, bad, at);
      size_t where = 0;
      CONF_EXPECT(target.untouched(0xEE, at + kSizes[i], 3, &where), rule,
                  "the %zu B put from rank %d wrote past its end (byte %zu)", kSizes[i], src,
                  where - at);
    }
  }
  long outside = 0;
  CONF_EXPECT(target.guardsIntact(&outside), rule,
              "a put wrote outside the target's GPU registration (offset %ld)", outside);
  c.barrier("done");
  s.dereg(mInlines);
  s.dereg(mSource);
  s.dereg(mSignals);
  s.dereg(mTarget);
}

// Gets from every rank's GPU memory and its own into GPU memory, then one
// iflush naming the rank itself (NCCL's flush GFD): after it, every byte
// is there for the GPU (rma_proxy_progress.cc waits for it before it lets
// the device read).
void cudaGetAndFlush(Ctx& c) {
  Rule rule = Rule::RmaGetAndFlush;
  RmaSession s(c, 1, rule);
  const cu::Driver& driver = gpuOf(s);
  int n = c.nranks(), me = c.rank();
  const std::vector<size_t> sizes = {1, 4097, (1 << 20) + 3};
  const size_t region = sizes.back() + 5;
  GpuBuffer exposed(c, driver, region);
  GpuBuffer landed(c, driver, region * static_cast<size_t>(n));
  // The gets read from offset 5, where the pattern starts.
  exposed.fill(seedOf(me, 0, 0), 5, region - 5);
  landed.clear(0xEE);
  void* mExposed = s.reg(exposed.data(), exposed.size(), rule, NCCL_PTR_CUDA);
  void* mLanded = s.reg(landed.data(), landed.size(), rule, NCCL_PTR_CUDA);
  c.barrier("registered");
  for (size_t size : sizes) {
    std::vector<void*> gets;
    for (int from = 0; from < n; from++) {
      gets.push_back(s.get(0, 5, mExposed, size, region * static_cast<size_t>(from), mLanded, from,
                           format("%zu B from rank %d's GPU memory", size, from), rule));
    }
    s.flush(0, mLanded, me, format("after the %zu B gets", size), rule);
    for (int from = 0; from < n; from++) {
      size_t at = region * static_cast<size_t>(from);
      size_t bad = landed.verify(seedOf(from, 0, 0), at, size);
      CONF_EXPECT(bad == Buffer::kMismatch, rule,
                  "the %zu B get from rank %d's GPU memory differs at byte %zu after iflush", size,
                  from, bad);
      size_t where = 0;
      CONF_EXPECT(landed.untouched(0xEE, at + size, 3, &where), rule,
                  "the %zu B get from rank %d wrote past its end (byte %zu)", size, from,
                  where - at);
    }
    for (void* g : gets) s.wait(g, "a get", rule);
  }
  c.barrier("done");
  s.dereg(mLanded);
  s.dereg(mExposed);
}

}  // namespace

void addRmaCudaScenarios(std::vector<Scenario>& out) {
  auto rma = [&](const char* name, Rule rule, int ranks, void (*run)(Ctx&), const char* summary) {
    Scenario scenario = rmaScenario(name, rule, ranks, run, summary);
    scenario.needs.cudaMemory = true;
    out.push_back(scenario);
  };
  rma("CudaPutsLand", Rule::RmaPutsLand, 3, cudaPutsLand,
      "windows and signals in GPU memory, as NCCL's GIN proxy registers them: 0 B to 1 MiB "
      "from GPU and inline host sources, signals visible after their payload, exact");
  rma("CudaGetAndFlush", Rule::RmaGetAndFlush, 2, cudaGetAndFlush,
      "1 B to 1 MiB from the peer's and its own GPU memory into GPU memory, then iflush");
}

}  // namespace conformance
