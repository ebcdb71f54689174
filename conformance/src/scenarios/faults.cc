// SPDX-License-Identifier: Apache-2.0
// Faults: garbage handles and mhandles get errors, not crashes. The other
// fault scenarios live in one file per concern (faults.hpp).
#include <cstring>

#include "harness/wire.hpp"
#include "scenarios/faults.hpp"

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

}  // namespace

void addFaultScenarios(std::vector<Scenario>& out) {
  out.push_back(
      {.area = "Faults",
       .name = "GarbageHandleToConnect",
       .rule = Rule::GarbageHandlesRejected,
       .ranks = 1,
       .run = garbageHandle,
       .summary =
           "connect with handles of 0x00 and 0xFF bytes: an error (or pending), never a comm "
           "or a crash"});
  out.push_back(
      {.area = "Faults",
       .name = "BadMhandle",
       .rule = Rule::BadMhandlesRejected,
       .ranks = 2,
       .run = badMhandle,
       .summary =
           "isend/irecv/deregMr with an mhandle regMr never returned: an error, not a crash"});
  addPeerDeathScenarios(out);
  addStrayScenarios(out);
  addFailedConnectScenarios(out);
}

}  // namespace conformance
