// SPDX-License-Identifier: Apache-2.0
// Faults, peer death: a peer killed (SIGKILL) in each state a connection
// can be in surfaces on the survivor as an error within the profile's
// bound (peerDeathLimit, rule 50); a request posted after that fails fast,
// and the comm still deregisters and closes promptly (rule 51).
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "harness/wire.hpp"
#include "scenarios/faults.hpp"

namespace conformance {

[[noreturn]] void dieOnPurpose(Ctx& c) {
  c.peer().expectExit();
  c.activity("dying on purpose");
  usleep(100000);  // let the notice reach the coordinator first
  kill(getpid(), SIGKILL);
  for (;;) pause();
}

// Longer, by default, than every bundled plugin's own bound (sdk-socket:
// 30 s for a silent peer).
double deathLimit(const Ctx& c) {
  return c.profile().peerDeathSec * c.profile().timeScale;
}

namespace {

constexpr size_t kLarge = 64 << 20;  // more than any socket buffers hold

// Tests `request` until it fails (true) or completes (false); still pending
// at `end` breaks rule 50.
bool failsBy(Ctx& c, void* request, int* size, const std::string& what, double end) {
  c.activity("test(" + what + ")");
  double limit = end - nowSeconds();
  for (;;) {
    int done = 0;
    ncclResult_t res = c.net().test(request, &done, size);
    if (res != ncclSuccess) {
      c.note(what + " failed with " + resultText(res));
      return true;
    }
    if (done) return false;
    CONF_EXPECT(nowSeconds() < end, Rule::PeerDeathSurfaces,
                "%s is still pending after %.1f s: a dead peer must surface as an error",
                what.c_str(), limit);
    sched_yield();
  }
}

// Posts more sends (or receives) on a comm whose peer is dead until one
// fails, within `limit`: after an earlier failure the first must fail
// (fast), before one, sends may still complete into the kernel's buffers. A
// request that stays pending breaks rule 50, a receive that completes rule
// 35 (its bytes never came). Then deregMr and close, each prompt (rule 51).
void failsThenCloses(Ctx& c, void* comm, bool send, void* mh, Buffer& buf, double limit,
                     bool failedBefore) {
  std::string what =
      send ? "an isend posted after the peer died" : "an irecv posted after the peer died";
  double end = nowSeconds() + limit;
  for (int completed = 0;;) {
    void* r = nullptr;
    c.activity(what);
    ncclResult_t res;
    if (send) {
      res = c.net().isend(comm, buf.data(), 4096, 0, mh, nullptr, &r);
    } else {
      void* data = buf.data();
      size_t cap = 4096;
      int tag = 0;
      res = c.net().irecv(comm, 1, &data, &cap, &tag, &mh, nullptr, &r);
    }
    if (res != ncclSuccess) {
      c.note(what + ": the call failed with " + resultText(res));
      break;
    }
    if (r == nullptr) {
      CONF_EXPECT(nowSeconds() < end, Rule::PeerDeathSurfaces,
                  "%s: the plugin kept answering NULL (try again) for %.1f s on a connection "
                  "whose peer is dead",
                  what.c_str(), limit);
      sched_yield();
      continue;
    }
    int size = -1;
    if (failsBy(c, r, &size, what, end)) break;
    CONF_EXPECT(send, Rule::CompletionReportsSizes,
                "%s completed with %d B although its peer is dead", what.c_str(), size);
    CONF_EXPECT(!failedBefore, Rule::PeerDeathSurfaces,
                "%s completed although an earlier request on the connection failed", what.c_str());
    CONF_EXPECT(nowSeconds() < end, Rule::PeerDeathSurfaces,
                "%.1f s after the receiver was killed, %d sends posted since have completed and "
                "none failed",
                limit, ++completed);
  }
  double start = nowSeconds();
  ncclResult_t res = c.tryDereg(comm, mh);
  double took = nowSeconds() - start;
  if (took > c.callLimit())
    c.deferShould(Rule::CallsReturnPromptly,
                  format("deregMr on a connection whose peer is dead took %.2f s", took));
  if (res != ncclSuccess) c.note("deregMr after the failure returned " + resultText(res));
  res = send ? c.tryCloseSend(comm) : c.tryCloseRecv(comm);
  if (res != ncclSuccess) c.note("closing the failed comm returned " + resultText(res));
}

void senderDeathMidTransfer(Ctx& c) {
  // Rank 1 starts a large send and dies; rank 0's receive must end in an
  // error (or, if everything had arrived, complete intact), never hang.
  void* comm = c.link(1, 0, "connection");
  Buffer buf(kLarge);
  void* mh = c.reg(comm, buf.data(), kLarge);
  c.barrier("before the transfer");
  if (c.rank() == 1) {
    buf.fill(108);
    void* r = c.isend(comm, buf.data(), kLarge, 0, mh, "64 MiB, interrupted by death");
    int done = 0, size = 0;
    for (int i = 0; i < 20 && !done; i++) c.net().test(r, &done, &size);
    dieOnPurpose(c);
  }
  void* data = buf.data();
  size_t cap = kLarge;
  int tag = 0;
  ShouldStep step;
  void* r = c.irecv(comm, 1, &data, &cap, &tag, &mh, "64 MiB from a rank that dies");
  int size = -1;
  bool failed = failsBy(c, r, &size, "the receive of 64 MiB from a rank that was killed",
                        nowSeconds() + deathLimit(c));
  if (!failed) {
    CONF_EXPECT(size == static_cast<int>(kLarge) && buf.verify(108) == Buffer::kMismatch,
                Rule::CompletionReportsSizes,
                "the receive from a rank that died completed with %d B or wrong bytes", size);
    c.note("the whole message had arrived before the peer died");
  }
  // After a completed message the next receive meets the death afresh.
  failsThenCloses(c, comm, false, mh, buf, failed ? c.callLimit() : deathLimit(c), failed);
}

void senderDeathWhileIdle(Ctx& c) {
  // Rank 1 sends one whole message, then dies while rank 0 waits for a
  // second one on the now idle connection: that receive must fail.
  void* comm = c.link(1, 0, "connection");
  c.transfer(comm, 1, 0, 4096, 5001);
  Buffer buf(4096);
  void* mh = c.rank() == 0 ? c.reg(comm, buf.data(), buf.size()) : nullptr;
  void* r = nullptr;
  if (c.rank() == 0) {
    void* data = buf.data();
    size_t cap = buf.size();
    int tag = 0;
    r = c.irecv(comm, 1, &data, &cap, &tag, &mh, "4096 B that never comes");
  }
  c.barrier("a receive is posted on the idle connection");
  if (c.rank() == 1) dieOnPurpose(c);
  ShouldStep step;
  int size = -1;
  bool failed =
      failsBy(c, r, &size, "a receive posted on an idle connection whose sender was killed",
              nowSeconds() + deathLimit(c));
  CONF_EXPECT(failed, Rule::CompletionReportsSizes,
              "a receive completed (%d B) although its sender died without sending", size);
  failsThenCloses(c, comm, false, mh, buf, c.callLimit(), true);
}

void receiverDeathMidSend(Ctx& c) {
  // Rank 0's 64 MiB send is under way, partly received, when rank 1 (the
  // receiver) is killed: the send must fail.
  void* comm = c.link(0, 1, "connection");
  Buffer buf(kLarge);
  buf.fill(5201);
  void* mh = c.reg(comm, buf.data(), kLarge);
  c.barrier("before the transfer");
  void* r = nullptr;
  int done = 0, size = -1;
  if (c.rank() == 1) {
    void* data = buf.data();
    size_t cap = kLarge;
    int tag = 0;
    r = c.irecv(comm, 1, &data, &cap, &tag, &mh, "64 MiB, interrupted by death");
    // The receive progresses, as NCCL's proxy would, until the sender holds
    // its request: a plugin whose isend needs the receiver's progress (a
    // lazily connected tcp;ofi_rxm endpoint) gets it; once both ranks meet,
    // the sender has made only a few test() calls: more than the socket
    // buffers hold, less than 64 MiB.
    std::atomic<bool> met{false};
    std::thread progress([&] {
      int progressed = 0;
      while (!met.load() && !progressed) c.net().test(r, &progressed, &size);
    });
    c.barrier("the transfer is under way");
    met = true;
    progress.join();
    dieOnPurpose(c);
  }
  r = c.isend(comm, buf.data(), kLarge, 0, mh, "64 MiB to a rank that dies");
  for (int i = 0; i < 3 && !done; i++) c.net().test(r, &done, &size);
  c.barrier("the transfer is under way");
  ShouldStep step;
  bool failed = done == 0 && failsBy(c, r, &size, "a 64 MiB send whose receiver was killed",
                                     nowSeconds() + deathLimit(c));
  if (!failed) c.note("the whole message had left before the receiver died");
  failsThenCloses(c, comm, true, mh, buf, failed ? c.callLimit() : deathLimit(c), failed);
}

void receiverDeathBeforeMatch(Ctx& c) {
  // Rank 0 posts a 64 MiB send that rank 1 never receives: rank 1 is killed
  // before it posts the receive. The unmatched send must fail (a plugin
  // that waits for the receiver may answer NULL until then: that too must
  // end in an error).
  void* comm = c.link(0, 1, "connection");
  c.transfer(comm, 0, 1, 4096, 5301);
  if (c.rank() == 1) {
    c.barrier("a send waits for its receive");
    dieOnPurpose(c);
  }
  Buffer buf(kLarge);
  buf.fill(5302);
  void* mh = c.reg(comm, buf.data(), kLarge);
  void* r = c.isendOnce(comm, buf.data(), kLarge, 0, mh, "64 MiB that is never received");
  int done = 0, size = -1;
  for (int i = 0; r != nullptr && i < 20 && !done; i++) c.net().test(r, &done, &size);
  CONF_EXPECT(!done, Rule::CompletionReportsSizes,
              "a 64 MiB send completed although no receive was posted for it");
  c.barrier("a send waits for its receive");
  ShouldStep step;
  double end = nowSeconds() + deathLimit(c);
  bool failed = false;
  while (r == nullptr && !failed) {
    c.activity("isend of 64 MiB to a receiver that was killed before receiving");
    ncclResult_t res = c.net().isend(comm, buf.data(), kLarge, 0, mh, nullptr, &r);
    failed = res != ncclSuccess;
    if (failed) c.note("isend failed with " + resultText(res) + " after the receiver died");
    CONF_EXPECT(failed || r != nullptr || nowSeconds() < end, Rule::PeerDeathSurfaces,
                "isend kept answering NULL (try again) %.1f s after its receiver was killed: a "
                "dead peer must surface as an error",
                deathLimit(c));
    sched_yield();
  }
  if (!failed)
    failed =
        failsBy(c, r, &size, "a 64 MiB send whose receiver was killed before receiving it", end);
  CONF_EXPECT(failed, Rule::PeerDeathSurfaces,
              "a 64 MiB send completed although its receiver was killed before receiving it");
  failsThenCloses(c, comm, true, mh, buf, c.callLimit(), true);
}

void receiverDeathUnderSends(Ctx& c) {
  // Rank 1 dies with the connection idle; rank 0 keeps sending 1 MiB
  // messages. Some may complete into the kernel's buffers, but within the
  // bound one must fail.
  void* comm = c.link(0, 1, "connection");
  c.transfer(comm, 0, 1, 4096, 5101);
  if (c.rank() == 1) {
    c.barrier("the connection is idle");
    dieOnPurpose(c);
  }
  constexpr size_t kSize = 1 << 20;
  Buffer buf(kSize);
  buf.fill(5102);
  void* mh = c.reg(comm, buf.data(), kSize);
  c.barrier("the connection is idle");
  c.barrier("the receiver is gone");  // completes once rank 1 has exited
  ShouldStep step;
  double limit = deathLimit(c);
  double end = nowSeconds() + limit;
  int completed = 0;
  long nulls = 0;  // isend calls that took nothing (try again)
  void* r = nullptr;
  for (;;) {
    if (r == nullptr) {
      c.activity(format("isend #%d to a receiver that was killed", completed + 1));
      ncclResult_t res = c.net().isend(comm, buf.data(), kSize, 0, mh, nullptr, &r);
      nulls += res == ncclSuccess && r == nullptr;
      if (res != ncclSuccess) {
        c.note(format("isend #%d failed with %s after the receiver died", completed + 1,
                      resultText(res).c_str()));
        break;
      }
    } else {
      int done = 0, size = -1;
      c.activity(format("test(isend #%d to a receiver that was killed)", completed + 1));
      ncclResult_t res = c.net().test(r, &done, &size);
      if (res != ncclSuccess) {
        c.note(format("send #%d failed with %s after the receiver died", completed + 1,
                      resultText(res).c_str()));
        break;
      }
      if (done) {
        completed++;
        r = nullptr;
      }
    }
    CONF_EXPECT(nowSeconds() < end, Rule::PeerDeathSurfaces,
                "%.1f s after the receiver was killed, no send has failed (%d completed; %s): a "
                "dead peer must surface as an error",
                limit, completed,
                r != nullptr ? "one still pending"
                             : format("isend answered NULL, try again, %ld times", nulls).c_str());
    sched_yield();
  }
  failsThenCloses(c, comm, true, mh, buf, c.callLimit(), true);
}

}  // namespace

void addPeerDeathScenarios(std::vector<Scenario>& out) {
  out.push_back(
      {.area = "Faults",
       .name = "PeerDeathMidTransfer",
       .rule = Rule::PeerDeathSurfaces,
       .ranks = 2,
       .run = senderDeathMidTransfer,
       .summary =
           "the sender dies during a 64 MiB transfer: the receive fails instead of hanging"});
  out.push_back({.area = "Faults",
                 .name = "PeerDeathWhileIdle",
                 .rule = Rule::PeerDeathSurfaces,
                 .ranks = 2,
                 .run = senderDeathWhileIdle,
                 .summary =
                     "the sender dies with the connection idle: the receive waiting on it fails "
                     "within peerDeathLimit"});
  out.push_back({.area = "Faults",
                 .name = "ReceiverDeathMidSend",
                 .rule = Rule::PeerDeathSurfaces,
                 .ranks = 2,
                 .run = receiverDeathMidSend,
                 .summary = "the receiver dies during a 64 MiB transfer: the send fails within "
                            "peerDeathLimit"});
  out.push_back({.area = "Faults",
                 .name = "ReceiverDeathBeforeMatch",
                 .rule = Rule::PeerDeathSurfaces,
                 .ranks = 2,
                 .run = receiverDeathBeforeMatch,
                 .summary =
                     "the receiver dies before posting the receive of a pending 64 MiB send: the "
                     "send fails within peerDeathLimit"});
  out.push_back(
      {.area = "Faults",
       .name = "ReceiverDeathUnderSends",
       .rule = Rule::PeerDeathSurfaces,
       .ranks = 2,
       .run = receiverDeathUnderSends,
       .summary = "the receiver dies with the connection idle: one of the sends that follow fails "
                  "within peerDeathLimit"});
}

}  // namespace conformance
