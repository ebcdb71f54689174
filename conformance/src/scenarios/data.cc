// SPDX-License-Identifier: Apache-2.0
// Data path: every size with every byte verified, zero bytes, the largest
// message, posting order, receives larger than the send, truncation, and
// both directions at once.
#include <new>

#include "harness/wire.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

void sizes(Ctx& c) {
  void* forward = c.link(0, 1, "rank 0 to rank 1");
  void* backward = c.link(1, 0, "rank 1 to rank 0");
  uint64_t seed = 1;
  for (size_t size : c.profile().sizes) {
    c.transfer(forward, 0, 1, size, seed++);
    c.transfer(backward, 1, 0, size, seed++);
  }
}

void zeroBytes(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  for (int i = 0; i < 4; i++) {
    c.transfer(comm, 0, 1, 0, 33);
    c.transfer(comm, 0, 1, 1, 34 + i);
  }
}

void large(Ctx& c) {
  size_t size = c.profile().largeSize;
  if (size == 0) skip("the profile sets data.largeSize to 0");
  void* comm = c.link(0, 1, "connection");
  try {
    c.transfer(comm, 0, 1, size, 0x1a23);
  } catch (const std::bad_alloc&) {
    skip("not enough memory for a %zu B message", size);
  }
}

size_t orderSize(int i) {
  return 100 * static_cast<size_t>(i + 1) + static_cast<size_t>(i);
}

// Sender posts K messages; receiver posts K receives, before (preposted) or
// after (unexpected) the sends, and expects message i in receive i. With no
// receive posted, the plugin may refuse a send with a NULL request (rule 29,
// e.g. a receiver-driven plugin waits for clear-to-send): the sender then
// stops there, lets the receiver post, and retries in order, as NCCL does.
void orderRound(Ctx& c, void* comm, bool preposted, int round) {
  constexpr int kCount = 8;
  constexpr size_t kCapacity = 4096;
  std::string label = preposted ? "receives posted first" : "sends posted first";
  std::vector<Buffer> bufs;
  std::vector<void*> mrs, reqs;
  bool sender = c.rank() == 0;
  bufs.reserve(kCount);
  for (int i = 0; i < kCount; i++) {
    bufs.emplace_back(sender ? orderSize(i) : kCapacity);
    if (sender) bufs.back().fill(500 + round * 100 + i);
    mrs.push_back(c.reg(comm, bufs.back().data(), bufs.back().size()));
  }
  // Posts what is left in order; `once`: stop at the first NULL request.
  auto post = [&](bool once) {
    for (int i = static_cast<int>(reqs.size()); i < kCount; i++) {
      if (sender) {
        std::string what = format("message #%d", i);
        void* r = once ? c.isendOnce(comm, bufs[i].data(), orderSize(i), 0, mrs[i], what)
                       : c.isend(comm, bufs[i].data(), orderSize(i), 0, mrs[i], what);
        if (r == nullptr) {
          c.note(
              format("%s: isend(message #%d) returned NULL before any receive was posted; "
                     "retried after the receives",
                     label.c_str(), i));
          return;
        }
        reqs.push_back(r);
      } else {
        void* data = bufs[i].data();
        size_t cap = kCapacity;
        int tag = 0;
        reqs.push_back(c.irecv(comm, 1, &data, &cap, &tag, &mrs[i], format("receive #%d", i)));
      }
    }
  };
  bool postFirst = sender != preposted;
  if (postFirst) post(sender);
  c.barrier(label);
  post(false);
  for (int i = 0; i < kCount; i++) {
    int size = -1;
    CONF_OK(c.wait(reqs[i], &size, format("%s #%d", sender ? "isend" : "irecv", i)),
            Rule::CompletionReportsSizes, format("test(%s #%d)", sender ? "isend" : "irecv", i));
    if (sender) continue;
    for (int j = 0; j < kCount; j++) {
      bool match = size == static_cast<int>(orderSize(j)) &&
                   bufs[i].verify(500 + round * 100 + j, 0, orderSize(j)) == Buffer::kMismatch;
      if (!match) continue;
      CONF_EXPECT(i == j, Rule::TagRouting,
                  "%s: receive #%d got message #%d: sends and receives must match in posting order",
                  label.c_str(), i, j);
      break;
    }
    CONF_EXPECT(size == static_cast<int>(orderSize(i)) &&
                    bufs[i].verify(500 + round * 100 + i, 0, orderSize(i)) == Buffer::kMismatch,
                Rule::CompletionReportsSizes, "%s: receive #%d got %d B that match no message sent",
                label.c_str(), i, size);
  }
  for (size_t i = 0; i < mrs.size(); i++) c.dereg(comm, mrs[i]);
}

void postingOrder(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  orderRound(c, comm, false, 0);
  orderRound(c, comm, true, 1);
}

void recvLarger(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  constexpr size_t kSent = 1000, kCapacity = 65536;
  if (c.rank() == 0) {
    c.transfer(comm, 0, 1, kSent, 32);
    return;
  }
  Buffer buf(kCapacity);
  buf.clear(0xEE);
  void* mh = c.reg(comm, buf.data(), kCapacity);
  void* data = buf.data();
  size_t cap = kCapacity;
  int tag = 0;
  void* r = c.irecv(comm, 1, &data, &cap, &tag, &mh, "1000 B into 65536 B");
  int size = -1;
  CONF_OK(c.wait(r, &size, "irecv 1000 B into 65536 B"), Rule::TruncationIsAnError,
          "test(irecv of 1000 B into 65536 B)");
  CONF_EXPECT(
      size == static_cast<int>(kSent), Rule::CompletionReportsSizes,
      "test() reported sizes[0] = %d for a %zu B message received into a %zu B buffer: sizes "
      "must hold the bytes received",
      size, kSent, kCapacity);
  size_t bad = buf.verify(32, 0, kSent);
  CONF_EXPECT(bad == Buffer::kMismatch, Rule::CompletionReportsSizes,
              "byte %zu of the 1000 B message is wrong", bad);
  long where = 0;
  CONF_EXPECT(buf.guardsIntact(&where), Rule::TruncationIsAnError,
              "the plugin wrote at offset %ld, outside the receive buffer", where);
}

// Polls without throwing: 1 done, -1 error, 0 still pending at the limit.
int settle(Ctx& c, void* request, int* size, double limit, ncclResult_t* res) {
  double end = nowSeconds() + limit;
  for (;;) {
    int done = 0;
    *res = c.net().test(request, &done, size);
    if (*res != ncclSuccess) return -1;
    if (done) return 1;
    if (nowSeconds() > end) return 0;
  }
}

void truncation(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  constexpr size_t kSent = 8192, kCapacity = 4096;
  Buffer buf(c.rank() == 0 ? kSent : kCapacity);
  if (c.rank() == 0)
    buf.fill(32);
  else
    buf.clear(0xEE);
  void* mh = c.reg(comm, buf.data(), buf.size());
  int size = -1;
  ncclResult_t res = ncclSuccess;
  if (c.rank() == 0) {
    void* r = c.isend(comm, buf.data(), kSent, 0, mh, "8192 B into a 4096 B receive");
    c.activity("test(isend of 8192 B into a 4096 B receive)");
    // Done, an error or pending: all acceptable on the sending side.
    int outcome = settle(c, r, &size, c.waitLimit() / 2, &res);
    c.note(outcome > 0   ? "the oversized send completed"
           : outcome < 0 ? "the oversized send failed with " + resultText(res)
                         : "the oversized send stayed pending");
    return;
  }
  void* data = buf.data();
  size_t cap = kCapacity;
  int tag = 0;
  void* r = c.irecv(comm, 1, &data, &cap, &tag, &mh, "4096 B for an 8192 B send");
  c.activity("test(irecv of 4096 B for an 8192 B send)");
  int outcome = settle(c, r, &size, c.waitLimit(), &res);
  long where = 0;
  CONF_EXPECT(buf.guardsIntact(&where), Rule::TruncationIsAnError,
              "an 8192 B send into a 4096 B receive wrote at offset %ld, past the end of the "
              "receive buffer",
              where);
  CONF_EXPECT(outcome != 0, Rule::TruncationIsAnError,
              "an 8192 B send into a 4096 B receive left the receive pending for %.1f s: "
              "truncation must end the receive",
              c.waitLimit());
  // Completing it truncated is what NCCL's own IB transport does (rule 47).
  CONF_EXPECT(
      outcome != 1, Rule::TruncationReported,
      "an 8192 B send into a 4096 B receive completed successfully (sizes[0] = %d): truncation "
      "should be an error",
      size);
  c.note("the truncated receive failed with " + resultText(res));
}

void bothDirections(Ctx& c) {
  void* out = c.link(0, 1, "rank 0 to rank 1");
  void* in = c.link(1, 0, "rank 1 to rank 0");
  // Each rank's send and receive are in flight together.
  constexpr size_t kSize = 4 << 20;
  int peer = 1 - c.rank();
  void* mySend = c.rank() == 0 ? out : in;
  void* myRecv = c.rank() == 0 ? in : out;
  for (int it = 0; it < c.profile().iterations; it++) {
    Buffer sendBuf(kSize), recvBuf(kSize);
    uint64_t mine = 4000 + it * 2 + c.rank(), theirs = 4000 + it * 2 + peer;
    sendBuf.fill(mine);
    recvBuf.clear(0);
    void* ms = c.reg(mySend, sendBuf.data(), kSize);
    void* mr = c.reg(myRecv, recvBuf.data(), kSize);
    void* data = recvBuf.data();
    size_t cap = kSize;
    int tag = 0;
    void* rr = c.irecv(myRecv, 1, &data, &cap, &tag, &mr, "4 MiB from the peer");
    void* sr = c.isend(mySend, sendBuf.data(), kSize, 0, ms, "4 MiB to the peer");
    int size = -1, sent = -1;
    CONF_OK(c.wait(sr, &sent, "isend 4 MiB while receiving"), Rule::CompletionReportsSizes,
            "test(isend while receiving)");
    CONF_OK(c.wait(rr, &size, "irecv 4 MiB while sending"), Rule::CompletionReportsSizes,
            "test(irecv while sending)");
    size_t bad = recvBuf.verify(theirs, 0, kSize);
    CONF_EXPECT(size == static_cast<int>(kSize) && bad == Buffer::kMismatch,
                Rule::CompletionReportsSizes, "iteration %d: received %d B, first wrong byte %zu",
                it, size, bad);
    c.dereg(mySend, ms);
    c.dereg(myRecv, mr);
  }
}

}  // namespace

void addDataScenarios(std::vector<Scenario>& out) {
  out.push_back(
      {.area = "Data",
       .name = "SizesEveryByteVerified",
       .rule = Rule::CompletionReportsSizes,
       .ranks = 2,
       .run = sizes,
       .summary = "each size of data.sizes, both directions, sizes[0] and every byte checked"});
  out.push_back({.area = "Data",
                 .name = "ZeroByteMessages",
                 .rule = Rule::ZeroByteMessages,
                 .ranks = 2,
                 .run = zeroBytes,
                 .summary = "0 B messages complete, between 1 B ones"});
  out.push_back({.area = "Data",
                 .name = "LargeMessage",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = large,
                 .summary = "one data.largeSize message (1 GiB by default), verified"});
  out.push_back(
      {.area = "Data",
       .name = "PostingOrder",
       .rule = Rule::TagRouting,
       .ranks = 2,
       .run = postingOrder,
       .summary = "8 messages match 8 receives in posting order, sends first and receives first"});
  out.push_back(
      {.area = "Data",
       .name = "RecvLargerThanSend",
       .rule = Rule::TruncationIsAnError,
       .ranks = 2,
       .run = recvLarger,
       .summary = "1000 B into 65536 B: completes with sizes[0] = 1000, nothing written outside"});
  out.push_back({.area = "Data",
                 .name = "TruncationIsAnError",
                 .rule = Rule::TruncationIsAnError,
                 .ranks = 2,
                 .run = truncation,
                 .summary =
                     "8192 B into 4096 B: nothing written past the buffer and the receive ends; "
                     "it should fail rather than complete truncated (rule 47)"});
  out.push_back({.area = "Data",
                 .name = "BothDirectionsAtOnce",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = bothDirections,
                 .summary = "each rank sends and receives 4 MiB at the same time"});
}

}  // namespace conformance
