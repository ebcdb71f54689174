// SPDX-License-Identifier: Apache-2.0
// Connection setup: non-blocking connect and accept, retries with the same
// handle, interleaving, fan-in on one listen, listens that are never used,
// many comms, NULL device-handle pointers, and NCCL's one-thread loopback.
#include <cstring>

#include "harness/wire.hpp"
#include "scenario/multi.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

Handle publish(Ctx& c, int owner, const Handle& mine, const std::string& label) {
  std::vector<std::string> all =
      c.allgather(label, c.rank() == owner ? std::string(mine.bytes, sizeof(mine.bytes)) : "");
  Handle h;
  std::memcpy(h.bytes, all[static_cast<size_t>(owner)].data(), sizeof(h.bytes));
  return h;
}

// Polls connect (src) until it completes; each call is timed by Ctx.
void* connectWith(Ctx& c, Handle* h, ncclNetDeviceHandle_v12_t** devComm) {
  double limit = nowSeconds() + c.waitLimit();
  for (int attempt = 1;; attempt++) {
    void* comm = c.connectOnce(0, h, devComm, attempt);
    if (comm != nullptr) return comm;
    CONF_EXPECT(nowSeconds() < limit, Rule::ConnectAcceptNeverBlock,
                "connect() not done after %d calls", attempt);
  }
}

void* acceptWith(Ctx& c, void* listenComm, ncclNetDeviceHandle_v12_t** devComm) {
  double limit = nowSeconds() + c.waitLimit();
  for (int attempt = 1;; attempt++) {
    void* comm = c.acceptOnce(listenComm, devComm, attempt);
    if (comm != nullptr) return comm;
    CONF_EXPECT(nowSeconds() < limit, Rule::ConnectAcceptNeverBlock,
                "accept() not done after %d calls", attempt);
  }
}

void connectDoesNotBlock(Ctx& c) {
  Handle mine;
  void* listenComm = c.rank() == 1 ? c.listen(0, &mine) : nullptr;
  Handle h = publish(c, 1, mine, "handle");
  void* comm = nullptr;
  ncclNetDeviceHandle_v12_t* devComm = nullptr;
  if (c.rank() == 0) {
    // The peer has not called accept yet: a blocking connect never returns.
    for (int attempt = 1; attempt <= 5 && comm == nullptr; attempt++) {
      comm = c.connectOnce(0, &h, &devComm, attempt);
    }
    c.barrier("connect polled before any accept");
    if (comm == nullptr) comm = connectWith(c, &h, &devComm);
  } else {
    try {
      c.barrier("connect polled before any accept");
    } catch (const PeerLost& lost) {
      fail(Rule::ConnectAcceptNeverBlock,
           "rank 0's connect() did not return while no accept() had been called: %s",
           lost.why.c_str());
    }
    comm = c.accept(listenComm);
    c.closeListen(listenComm);
  }
  c.transfer(comm, 0, 1, 4096, 22);
}

void acceptDoesNotBlock(Ctx& c) {
  Handle mine;
  void* listenComm = c.rank() == 1 ? c.listen(0, &mine) : nullptr;
  Handle h = publish(c, 1, mine, "handle");
  void* comm = nullptr;
  ncclNetDeviceHandle_v12_t* devComm = nullptr;
  if (c.rank() == 1) {
    // Nobody connects yet: a blocking accept never returns.
    for (int attempt = 1; attempt <= 5; attempt++) {
      CONF_EXPECT(c.acceptOnce(listenComm, &devComm, attempt) == nullptr,
                  Rule::ConnectAcceptNeverBlock,
                  "accept() returned a recvComm although nobody had connected");
    }
    c.barrier("accept polled before any connect");
    comm = acceptWith(c, listenComm, &devComm);
    c.closeListen(listenComm);
  } else {
    try {
      c.barrier("accept polled before any connect");
    } catch (const PeerLost& lost) {
      fail(Rule::ConnectAcceptNeverBlock,
           "rank 1's accept() did not return while nobody had connected: %s", lost.why.c_str());
    }
    comm = c.connect(0, &h);
  }
  c.transfer(comm, 0, 1, 4096, 23);
}

void interleaved(Ctx& c) {
  std::vector<void*> comms = linkMany(c, 0, 1, 4, "four connections");
  checkEachConnection(c, comms, 0, 1, Rule::ConnectAcceptNeverBlock);
}

void severalConnectsToOneListen(Ctx& c) {
  // Fan-in: ranks 1 and 2 connect with the same handle to rank 0's listen.
  Handle mine;
  void* listenComm = c.rank() == 0 ? c.listen(0, &mine) : nullptr;
  Handle h = publish(c, 0, mine, "handle of the one listen");
  if (c.rank() != 0) {
    void* comm = c.connect(0, &h);
    c.transfer(comm, c.rank(), 0, 1000 + c.rank(), 0xF00 + c.rank());
    return;
  }
  void* first = c.accept(listenComm);
  void* second = c.accept(listenComm);
  c.closeListen(listenComm);
  // Which accept belongs to which rank is not known: receive on both and
  // match the messages.
  Buffer a(4096), b(4096);
  void* ma = c.reg(first, a.data(), a.size());
  void* mb = c.reg(second, b.data(), b.size());
  size_t cap = 4096;
  int tag = 0;
  void* pa = a.data();
  void* pb = b.data();
  void* ra = c.irecv(first, 1, &pa, &cap, &tag, &ma, "first accepted comm");
  void* rb = c.irecv(second, 1, &pb, &cap, &tag, &mb, "second accepted comm");
  int sa = -1, sb = -1;
  CONF_OK(c.wait(ra, &sa, "irecv on the first accepted comm"), Rule::CompletionReportsSizes,
          "test(irecv, first accepted comm)");
  CONF_OK(c.wait(rb, &sb, "irecv on the second accepted comm"), Rule::CompletionReportsSizes,
          "test(irecv, second accepted comm)");
  auto from = [](Buffer& buf, int size) {
    for (int r = 1; r <= 2; r++) {
      if (size == 1000 + r &&
          buf.verify(0xF00 + r, 0, static_cast<size_t>(size)) == Buffer::kMismatch)
        return r;
    }
    return 0;
  };
  int ra1 = from(a, sa), rb1 = from(b, sb);
  CONF_EXPECT(
      ra1 != 0 && rb1 != 0 && ra1 != rb1, Rule::ListenNeverBlocks,
      "two connects to one listen: the accepted comms carried messages from ranks %d and %d "
      "(0: unrecognised; sizes %d and %d)",
      ra1, rb1, sa, sb);
}

void listenClosedWithoutAccept(Ctx& c) {
  // NCCL's shared comms close the listens of the ranks that lost the
  // election without any connect or accept.
  if (c.rank() == 1) {
    for (int i = 0; i < 3; i++) {
      Handle h;
      c.closeListen(c.listen(0, &h));
    }
  }
  Handle unused;
  void* published = c.rank() == 1 ? c.listen(0, &unused) : nullptr;
  publish(c, 1, unused, "handle nobody connects to");
  if (c.rank() == 1) c.closeListen(published);
  void* comm = c.link(0, 1, "a connection after the unused listens");
  c.transfer(comm, 0, 1, 65536, 21);
}

// NCCL 2.19 and later open a comm per peer, channel and connection index
// whatever maxComms says (src/transport/net.cc sendProxyConnect); up to
// 2.18.1, which loads v6 tables at most, NCCL used a NIC for at most
// maxComms channels.
void manyComms(Ctx& c) {
  int n = c.version() <= 6 ? std::max(1, std::min(c.props().maxComms, c.profile().manyComms))
                           : c.profile().manyComms;
  std::vector<void*> comms = linkMany(c, 0, 1, n, format("%d connections", n));
  c.note(format("%d connections open at once", n));
  checkEachConnection(c, comms, 0, 1, Rule::MaxCommsPositive);
}

void nullDevComm(Ctx& c) {
  // The GDR probe and the bootstrap pass NULL for the device handle pointer.
  Handle mine;
  void* listenComm = c.rank() == 1 ? c.listen(0, &mine) : nullptr;
  Handle h = publish(c, 1, mine, "handle");
  void* comm = c.rank() == 0 ? connectWith(c, &h, nullptr) : acceptWith(c, listenComm, nullptr);
  if (c.rank() == 1) c.closeListen(listenComm);
  c.transfer(comm, 0, 1, 4096, 23);
}

void loopbackOneThread(Ctx& c) {
  // NCCL's GDR probe: listen, connect and accept to itself, in one thread.
  Handle h;
  void* listenComm = c.listen(0, &h);
  void* send = nullptr;
  void* recv = nullptr;
  double limit = nowSeconds() + c.waitLimit();
  for (int attempt = 1; send == nullptr || recv == nullptr; attempt++) {
    if (send == nullptr) send = c.connectOnce(0, &h, nullptr, attempt);
    if (recv == nullptr) recv = c.acceptOnce(listenComm, nullptr, attempt);
    CONF_EXPECT(nowSeconds() < limit, Rule::ConnectAcceptNeverBlock,
                "loopback connect/accept in one thread not done after %d rounds", attempt);
  }
  c.closeListen(listenComm);
  Buffer out(8192), in(8192);
  out.fill(7);
  void* ms = c.reg(send, out.data(), out.size());
  void* mr = c.reg(recv, in.data(), in.size());
  void* data = in.data();
  size_t cap = in.size();
  int tag = 0;
  void* rr = c.irecv(recv, 1, &data, &cap, &tag, &mr, "loopback 8192 B");
  void* sr = c.isend(send, out.data(), out.size(), 0, ms, "loopback 8192 B");
  int sdone = 0, rdone = 0, rsize = -1, ssize = -1;
  c.activity("test(loopback isend and irecv) in one thread");
  while (!sdone || !rdone) {
    if (!sdone)
      CONF_OK(c.net().test(sr, &sdone, &ssize), Rule::CompletionReportsSizes,
              "test(loopback isend)");
    if (!rdone)
      CONF_OK(c.net().test(rr, &rdone, &rsize), Rule::CompletionReportsSizes,
              "test(loopback irecv)");
    CONF_EXPECT(nowSeconds() < limit, Rule::CompletionReportsSizes,
                "loopback transfer in one thread not done");
  }
  CONF_EXPECT(rsize == 8192 && in.verify(7) == Buffer::kMismatch, Rule::CompletionReportsSizes,
              "loopback transfer received %d B or wrong bytes", rsize);
}

}  // namespace

void addConnectScenarios(std::vector<Scenario>& out) {
  out.push_back({.area = "Connect",
                 .name = "ConnectDoesNotBlock",
                 .rule = Rule::ConnectAcceptNeverBlock,
                 .ranks = 2,
                 .run = connectDoesNotBlock,
                 .summary = "connect returns (NULL) before the peer ever calls accept"});
  out.push_back({.area = "Connect",
                 .name = "AcceptDoesNotBlock",
                 .rule = Rule::ConnectAcceptNeverBlock,
                 .ranks = 2,
                 .run = acceptDoesNotBlock,
                 .summary = "accept returns NULL before anyone connects"});
  out.push_back(
      {.area = "Connect",
       .name = "InterleavedConnections",
       .rule = Rule::ConnectAcceptNeverBlock,
       .ranks = 2,
       .run = interleaved,
       .summary =
           "4 connects/accepts polled round-robin in opposite orders; no crossed connections"});
  out.push_back(
      {.area = "Connect",
       .name = "SeveralConnectsToOneListen",
       .rule = Rule::ListenNeverBlocks,
       .ranks = 3,
       .run = severalConnectsToOneListen,
       .summary =
           "two ranks connect to one listen; both accepted comms carry their sender's data"});
  out.push_back(
      {.area = "Connect",
       .name = "ListenClosedWithoutAccept",
       .rule = Rule::ListenNeverBlocks,
       .ranks = 2,
       .run = listenClosedWithoutAccept,
       .summary =
           "listens closed with no connect or accept; the plugin still connects afterwards"});
  out.push_back({.area = "Connect",
                 .name = "ManyComms",
                 .rule = Rule::MaxCommsPositive,
                 .ranks = 2,
                 .run = manyComms,
                 .summary = "data.manyComms connections open at once (through v6 at most "
                            "maxComms), each carrying its own message"});
  out.push_back({.area = "Connect",
                 .name = "NullDevCommPointers",
                 .rule = Rule::DevCommMayBeNull,
                 .ranks = 2,
                 .run = nullDevComm,
                 .summary = "connect/accept with sendDevComm/recvDevComm = NULL"});
  out.push_back(
      {.area = "Connect",
       .name = "LoopbackInOneThread",
       .rule = Rule::ConnectAcceptNeverBlock,
       .ranks = 1,
       .run = loopbackOneThread,
       .summary = "listen/connect/accept/transfer to itself in one thread (NCCL's GDR probe)"});
}

}  // namespace conformance
