// SPDX-License-Identifier: Apache-2.0
// Faults: garbage handles and mhandles get errors, not crashes; a peer that
// dies, mid-transfer or with the connection idle, on either end, surfaces
// as an error, not a hang.
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "harness/wire.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

void garbageHandle(Ctx& c) {
  void* context = c.comm();
  for (unsigned char fill : {0x00, 0xFF}) {
    ShouldStep step;
    Handle h;
    std::memset(h.bytes, fill, sizeof(h.bytes));
    double end = nowSeconds() + 1.0 * c.profile().timeScale;
    ncclResult_t res = ncclSuccess;
    void* sendComm = nullptr;
    int calls = 0;
    while (res == ncclSuccess && sendComm == nullptr && nowSeconds() < end) {
      ncclNetDeviceHandle_v12_t* devComm = nullptr;
      c.activity(format("connect(handle of 0x%02x bytes), call #%d", fill, ++calls));
      res = c.net().connect(context, 0, h.bytes, &sendComm, &devComm);
    }
    CONF_EXPECT(sendComm == nullptr, Rule::GarbageHandlesRejected,
                "connect with a handle of 0x%02x bytes returned a sendComm: it must be rejected",
                fill);
    if (res == ncclSuccess)
      c.note(format("connect(0x%02x handle) stayed pending for %d calls", fill, calls));
  }
}

// A handle regMr never returned: readable memory, so a plugin that does not
// check it reads garbage rather than crashing the harness' own test.
alignas(64) unsigned char bogusHandle[256];

void badMhandle(Ctx& c) {
  std::memset(bogusHandle, 0xA5, sizeof(bogusHandle));
  void* comm = c.link(0, 1, "connection");
  Buffer buf(4096);
  void* request = nullptr;
  ncclResult_t res;
  ShouldStep step;
  if (c.rank() == 0) {
    c.activity("isend with an mhandle regMr never returned");
    res = c.net().isend(comm, buf.data(), 4096, 0, bogusHandle, nullptr, &request);
    CONF_EXPECT(res != ncclSuccess || request == nullptr, Rule::BadMhandlesRejected,
                "isend accepted an mhandle that regMr never returned");
  } else {
    void* data = buf.data();
    size_t cap = 4096;
    int tag = 0;
    void* mh = bogusHandle;
    c.activity("irecv with an mhandle regMr never returned");
    res = c.net().irecv(comm, 1, &data, &cap, &tag, &mh, nullptr, &request);
    CONF_EXPECT(res != ncclSuccess || request == nullptr, Rule::BadMhandlesRejected,
                "irecv accepted an mhandle that regMr never returned");
  }
  c.activity("deregMr of an mhandle regMr never returned");
  res = c.net().deregMr(comm, bogusHandle);
  CONF_EXPECT(res != ncclSuccess, Rule::BadMhandlesRejected,
              "deregMr accepted an mhandle that regMr never returned");
}

void dieOnPurpose(Ctx& c) {
  c.peer().expectExit();
  c.activity("dying on purpose");
  usleep(100000);  // let the notice reach the coordinator first
  kill(getpid(), SIGKILL);
  pause();
}

void peerDeath(Ctx& c) {
  // Rank 1 starts a large send and dies; rank 0's receive must end in an
  // error (or, if everything had arrived, complete intact), never hang.
  void* comm = c.link(1, 0, "connection");
  constexpr size_t kSize = 64 << 20;
  Buffer buf(kSize);
  void* mh = c.reg(comm, buf.data(), kSize);
  c.barrier("before the transfer");
  if (c.rank() == 1) {
    buf.fill(108);
    void* r = c.isend(comm, buf.data(), kSize, 0, mh, "64 MiB, interrupted by death");
    int done = 0, size = 0;
    for (int i = 0; i < 20 && !done; i++) c.net().test(r, &done, &size);
    dieOnPurpose(c);
  }
  void* data = buf.data();
  size_t cap = kSize;
  int tag = 0;
  ShouldStep step;
  void* r = c.irecv(comm, 1, &data, &cap, &tag, &mh, "64 MiB from a rank that dies");
  c.activity("test(irecv of 64 MiB from a rank that died)");
  double end = nowSeconds() + c.waitLimit();
  for (;;) {
    int done = 0, size = -1;
    ncclResult_t res = c.net().test(r, &done, &size);
    if (res != ncclSuccess) {
      c.note("the receive failed with " + resultName(res) + " after the peer died");
      break;
    }
    if (done) {
      CONF_EXPECT(
          size == static_cast<int>(kSize) && buf.verify(108) == Buffer::kMismatch,
          Rule::PeerDeathSurfaces,
          "the receive from a rank that died completed successfully with %d B or wrong bytes",
          size);
      c.note("the whole message had arrived before the peer died");
      break;
    }
    CONF_EXPECT(nowSeconds() < end, Rule::PeerDeathSurfaces,
                "the receive from rank 1 is still pending %.1f s after rank 1 died: peer death "
                "must surface as "
                "an error",
                c.waitLimit());
  }
  // The connection is dead: closing it must still work.
  c.tryDereg(comm, mh);
}

// How long a plugin may take to notice a dead peer: a SIGKILLed process's
// sockets are closed by its kernel at once; a fabric that learns it from
// retries still answers within seconds.
double deathLimit(Ctx& c) {
  return std::min(c.waitLimit(), 10.0 * c.profile().timeScale);
}

void peerDeathWhileIdle(Ctx& c) {
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
  double limit = deathLimit(c);
  double end = nowSeconds() + limit;
  c.activity("test(receive posted on an idle connection whose sender was killed)");
  for (;;) {
    int done = 0, size = -1;
    ncclResult_t res = c.net().test(r, &done, &size);
    if (res != ncclSuccess) {
      c.note("the receive failed with " + resultName(res) + " after the idle peer died");
      break;
    }
    CONF_EXPECT(!done, Rule::PeerDeathSurfaces,
                "a receive completed (%d B) although its sender died without sending", size);
    CONF_EXPECT(nowSeconds() < end, Rule::PeerDeathSurfaces,
                "a receive posted on an idle connection is still pending %.1f s after its sender "
                "was killed: a dead peer must surface as an error",
                limit);
    sched_yield();
  }
  c.tryDereg(comm, mh);
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
                      resultName(res).c_str()));
        break;
      }
    } else {
      int done = 0, size = -1;
      c.activity(format("test(isend #%d to a receiver that was killed)", completed + 1));
      ncclResult_t res = c.net().test(r, &done, &size);
      if (res != ncclSuccess) {
        c.note(format("send #%d failed with %s after the receiver died", completed + 1,
                      resultName(res).c_str()));
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
  c.tryDereg(comm, mh);
}

}  // namespace

void addFaultScenarios(std::vector<Scenario>& out) {
  out.push_back({"Faults", "GarbageHandleToConnect", Rule::GarbageHandlesRejected, 1, 6,
                 garbageHandle,
                 "connect with handles of 0x00 and 0xFF bytes: an error (or pending), never a comm "
                 "or a crash"});
  out.push_back(
      {"Faults", "BadMhandle", Rule::BadMhandlesRejected, 2, 6, badMhandle,
       "isend/irecv/deregMr with an mhandle regMr never returned: an error, not a crash"});
  out.push_back({"Faults", "PeerDeathMidTransfer", Rule::PeerDeathSurfaces, 2, 6, peerDeath,
                 "the sender dies during a 64 MiB transfer: the receive fails instead of hanging"});
  out.push_back({"Faults", "PeerDeathWhileIdle", Rule::PeerDeathSurfaces, 2, 6, peerDeathWhileIdle,
                 "the sender dies after a whole message: a receive posted on the idle connection "
                 "fails within 10 s"});
  out.push_back({"Faults", "ReceiverDeathUnderSends", Rule::PeerDeathSurfaces, 2, 6,
                 receiverDeathUnderSends,
                 "the receiver dies with the connection idle: one of the sends that follow fails "
                 "within 10 s"});
}

}  // namespace conformance
