// SPDX-License-Identifier: Apache-2.0
// Init/finalize: repeated, per communicator (v11+), tolerant of NULL, and
// the traffic class of a context.
#include "scenario/registry.hpp"

namespace conformance {

namespace {

void repeated(Ctx& c) {
  // NCCL inits once per communicator: a job that creates and destroys
  // communicators repeats the cycle many times in one process.
  for (int cycle = 1; cycle <= 10; cycle++) {
    void* context = c.newContext();
    c.useContext(context);
    int ndev = c.devices();
    CONF_EXPECT(ndev >= 1, 3, "devices() reported %d after init #%d", ndev, cycle);
    Handle handle;
    void* listenComm = c.listen(0, &handle);
    c.closeListen(listenComm);
    c.finalizeContext(context);
  }
}

void contextPerComm(Ctx& c) {
  // Two communicators alive at once, each with its own context; finalizing
  // one must leave the other working.
  void* first = c.newContext();
  void* second = c.newContext();
  c.useContext(first);
  void* one = c.link(0, 1, "first communicator");
  c.useContext(second);
  void* two = c.link(0, 1, "second communicator");
  c.transfer(one, 0, 1, 4096, 11);
  c.transfer(two, 0, 1, 4096, 12);
  if (c.rank() == 0) c.closeSend(one);
  if (c.rank() == 1) c.closeRecv(one);
  c.finalizeContext(first);
  c.barrier("first communicator finalized");
  c.transfer(two, 0, 1, 65536, 13);
}

void finalizeNull(Ctx& c) {
  // NCCL 2.28 finalizes the context of a failed init, which is NULL.
  c.activity("finalize(NULL)");
  ncclResult_t res = c.net().finalize(nullptr);
  if (res != ncclSuccess) c.note("finalize(NULL) returned " + resultName(res));
  int ndev = c.devices();
  CONF_EXPECT(ndev >= 1, 3, "the plugin reports %d devices after finalize(NULL)", ndev);
}

void trafficClass(Ctx& c) {
  c.useContext(c.newContext(3));
  void* comm = c.link(0, 1, "traffic class 3");
  c.transfer(comm, 0, 1, 8192, 24);
}

}  // namespace

void addInitScenarios(std::vector<Scenario>& out) {
  out.push_back({"Init", "RepeatedInitFinalize", 3, 1, 6, repeated,
                 "10 init/devices/listen/finalize cycles in one process"});
  out.push_back({"Init", "ContextPerCommunicator", 3, 2, 11, contextPerComm,
                 "two live contexts; finalizing one leaves the other working"});
  out.push_back({"Init", "FinalizeNullContext", 3, 1, 11, finalizeNull,
                 "finalize(NULL) neither crashes nor breaks the plugin"});
  out.push_back({"Init", "TrafficClassAccepted", 24, 2, 10, trafficClass,
                 "a connection made under trafficClass 3 carries data"});
}

}  // namespace conformance
