// SPDX-License-Identifier: Apache-2.0
// Completion: test() with NULL sizes, iflush on host memory, irecvConsumed.
#include "scenario/registry.hpp"

namespace conformance {

namespace {

// Posts one receive of `size` on the receiver; returns its request.
void* postRecv(Ctx& c, void* comm, Buffer& buf, void** mh, const std::string& what) {
  *mh = c.reg(comm, buf.data(), buf.size());
  void* data = buf.data();
  size_t cap = buf.size();
  int tag = 0;
  return c.irecv(comm, 1, &data, &cap, &tag, mh, what);
}

void nullSizes(Ctx& c) {
  // The bootstrap and NCCL's flush path test with sizes = NULL.
  void* comm = c.link(0, 1, "connection");
  Buffer buf(8192);
  void* mh = nullptr;
  void* r = nullptr;
  if (c.rank() == 0) {
    buf.fill(35);
    mh = c.reg(comm, buf.data(), buf.size());
    r = c.isend(comm, buf.data(), buf.size(), 0, mh, "8192 B");
  } else {
    r = postRecv(c, comm, buf, &mh, "8192 B");
  }
  CONF_OK(c.wait(r, nullptr, "test(request, &done, NULL)"), Rule::CompletionReportsSizes,
          "test() with sizes = NULL");
  if (c.rank() == 1)
    CONF_EXPECT(buf.verify(35) == Buffer::kMismatch, Rule::CompletionReportsSizes,
                "the data tested with sizes = NULL is wrong");
}

// NCCL calls iflush only after a SIMPLE receive into GPU memory through
// GPUDirect (src/transport/net.cc recvProxyProgress: useGdr && needFlush),
// and NCCL's own Socket transport fails every iflush
// (ncclNetSocketIflush): a flush of host memory is rule 46 (SHOULD), while
// the GpuMemory scenarios hold iflush to rule 36 where NCCL calls it.
void flushHost(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  // The first finding is kept and reported once both ranks are done: rank 0
  // keeps sending meanwhile, and a warning must not leave its sends waiting
  // for receives (a rule-35 timeout). After it, the receives go unflushed.
  std::string finding;
  for (int i = 0; i < c.profile().iterations; i++) {
    if (c.rank() == 0) {
      c.transfer(comm, 0, 1, 65536, 36 + i);
      continue;
    }
    Buffer buf(65536);
    void* mh = nullptr;
    void* r = postRecv(c, comm, buf, &mh, "65536 B");
    int size = -1;
    CONF_OK(c.wait(r, &size, "irecv 65536 B"), Rule::CompletionReportsSizes, "test(irecv)");
    if (finding.empty()) {
      void* data = buf.data();
      void* flush = reinterpret_cast<void*>(0xdead);
      c.activity("iflush(host memory)");
      ncclResult_t res = c.net().iflush(comm, 1, &data, &size, &mh, &flush);
      if (res != ncclSuccess) {
        finding = "iflush(host memory) returned " + resultText(res);
      } else if (flush == reinterpret_cast<void*>(0xdead)) {
        finding = "iflush returned without writing *request";
      } else if (flush != nullptr) {
        c.activity("test(flush request, sizes = NULL) until done");
        double end = nowSeconds() + c.waitLimit();
        int done = 0;
        while (!done && res == ncclSuccess && nowSeconds() < end)
          res = c.net().test(flush, &done, nullptr);
        if (res != ncclSuccess)
          finding = "test(flush request) returned " + resultText(res);
        else if (!done)
          finding = format("the flush request was still not done after %.1f s", c.waitLimit());
      }
    }
    CONF_EXPECT(buf.verify(36 + i) == Buffer::kMismatch, Rule::CompletionReportsSizes,
                "the data of receive #%d is wrong%s", i, finding.empty() ? " after iflush" : "");
    c.dereg(comm, mh);
  }
  c.barrier("every transfer done");
  CONF_EXPECT(finding.empty(), Rule::FlushOfHostMemory, "%s", finding.c_str());
}

void consumed(Ctx& c) {
  if (!c.net().provides(ncclnet::host::Optional::IrecvConsumed))
    skip("irecvConsumed is NULL (optional)");
  void* comm = c.link(0, 1, "connection");
  // More than a comm's 32 requests, so a request that irecvConsumed fails to
  // release (or releases twice) shows.
  constexpr int kCount = 3 * NCCL_NET_MAX_REQUESTS;
  for (int i = 0; i < kCount; i++) {
    if (c.rank() == 0) {
      c.transfer(comm, 0, 1, 256, 3700 + i);
      continue;
    }
    Buffer buf(256);
    void* mh = nullptr;
    void* r = postRecv(c, comm, buf, &mh, format("receive #%d", i));
    int size = -1;
    CONF_OK(c.wait(r, &size, format("irecv #%d", i)), Rule::CompletionReportsSizes, "test(irecv)");
    c.activity(format("irecvConsumed(receive #%d)", i));
    CONF_OK(c.net().irecvConsumed(comm, 1, r), Rule::IrecvConsumedAccepted,
            format("irecvConsumed(receive #%d)", i));
    CONF_EXPECT(buf.verify(3700 + i) == Buffer::kMismatch, Rule::CompletionReportsSizes,
                "receive #%d holds wrong bytes", i);
    c.dereg(comm, mh);
  }
}

}  // namespace

void addCompletionScenarios(std::vector<Scenario>& out) {
  out.push_back({.area = "Completion",
                 .name = "TestWithNullSizes",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = nullSizes,
                 .summary = "test(request, &done, NULL) on a send and a receive"});
  out.push_back({.area = "Completion",
                 .name = "FlushHostMemory",
                 .rule = Rule::FlushOfHostMemory,
                 .ranks = 2,
                 .run = flushHost,
                 .summary = "iflush after a host receive: NULL or a request that completes"});
  out.push_back({.area = "Completion",
                 .name = "IrecvConsumed",
                 .rule = Rule::IrecvConsumedAccepted,
                 .ranks = 2,
                 .needs = {.minAbi = 7},
                 .run = consumed,
                 .summary = "irecvConsumed after each of 96 completed receives (when provided)"});
}

}  // namespace conformance
