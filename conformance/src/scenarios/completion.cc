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

void flushHost(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
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
    void* data = buf.data();
    void* flush = reinterpret_cast<void*>(0xdead);
    c.activity("iflush(host memory)");
    CONF_OK(c.net().iflush(comm, 1, &data, &size, &mh, &flush), Rule::FlushMakesVisible,
            "iflush(host memory)");
    CONF_EXPECT(flush != reinterpret_cast<void*>(0xdead), Rule::FlushMakesVisible,
                "iflush returned without writing *request");
    if (flush != nullptr)
      CONF_OK(c.wait(flush, nullptr, "test(flush request, sizes = NULL)", Rule::FlushMakesVisible),
              Rule::FlushMakesVisible, "test(flush request)");
    CONF_EXPECT(buf.verify(36 + i) == Buffer::kMismatch, Rule::FlushMakesVisible,
                "data is wrong after iflush");
    c.dereg(comm, mh);
  }
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
                 .rule = Rule::FlushMakesVisible,
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
