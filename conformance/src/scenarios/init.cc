// SPDX-License-Identifier: Apache-2.0
// Init/finalize: repeated, per communicator (v11+), tolerant of NULL, and
// the traffic class of a context.
#include "ncclnet/host/callbacks.hpp"
#include "scenario/plugin_log.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

void repeated(Ctx& c) {
  // NCCL inits once per communicator (src/plugin/net.cc ncclNetInit). A job
  // that keeps its first communicator and creates and destroys others
  // repeats the cycle many times in one process, with a context always
  // alive; through v6..v10 the compat shim (src/plugin/net/net_v*.cc
  // ncclNet_init) then runs the plugin's own init only once.
  void* keeper = c.newContext();
  for (int cycle = 1; cycle <= 10; cycle++) {
    void* context = c.newContext();
    c.useContext(context);
    int ndev = c.devices();
    CONF_EXPECT(ndev >= 1, Rule::InitPerCommunicator, "devices() reported %d after init #%d", ndev,
                cycle);
    Handle handle;
    void* listenComm = c.listen(0, &handle);
    c.closeListen(listenComm);
    c.finalizeContext(context);
  }
  c.useContext(keeper);
  Handle handle;
  c.closeListen(c.listen(0, &handle));
}

void reinitAfterLastFinalize(Ctx& c) {
  // Every context finalized, then init on the same load: NCCL does this
  // when NCCL_NET_PLUGIN_REF_COUNT > 0 keeps the library loaded after its
  // last communicator (src/plugin/net.cc ncclNetPluginUnload is skipped),
  // and through v6..v10 the shim's refCount is back at 0, so the plugin's
  // own init runs again (2.30.3+ does the same without the setting when the
  // library cannot be unmapped). Whatever breaks after that is this rule's
  // finding.
  for (int cycle = 1; cycle <= 2; cycle++) {
    void* context = c.newContext();
    c.useContext(context);
    try {
      void* comm = c.link(0, 1, format("connection after init #%d", cycle));
      c.transfer(comm, 0, 1, 65536, 4200 + static_cast<uint64_t>(cycle));
      // A send may complete before its receive does: close once both did.
      c.barrier(format("transfer %d done on both ends", cycle));
      if (c.rank() == 0) c.closeSend(comm);
      if (c.rank() == 1) c.closeRecv(comm);
      c.finalizeContext(context);
      c.barrier(format("every context finalized (cycle %d)", cycle));
    } catch (const Violation& v) {
      if (cycle == 1) throw;  // the first cycle is an ordinary communicator
      fail(Rule::ReinitAfterLastFinalize,
           "after every context was finalized, init was called again on the same load: %s",
           v.message.c_str());
    }
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
  // NCCL 2.28 finalizes the context of a failed init, which is NULL: always
  // right after that init call (src/plugin/net.cc ncclNetPluginInit), and
  // after an earlier communicator's init. So: a live context, an init whose
  // context is dropped as a failed one's would be, then finalize(NULL) in
  // its stead. (Calling it before any init asks more than NCCL does: NCCL's
  // own Socket transport counts its users and would go below zero.)
  int before = c.devices();
  void* dropped = nullptr;
  ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  c.activity("init for a second communicator, then finalize(NULL) in its stead");
  ncclResult_t init = c.net().init(&dropped, 0x5eedf00dull, &config, pluginLogger(),
                                   ncclnet::host::profilerCallback());
  if (init != ncclSuccess) c.note("the second init returned " + resultText(init));
  ncclResult_t res = c.net().finalize(nullptr);
  if (res != ncclSuccess) c.note("finalize(NULL) returned " + resultText(res));
  int ndev = c.devices();
  CONF_EXPECT(ndev >= 1 && ndev == before, Rule::InitPerCommunicator,
              "the plugin reports %d devices after finalize(NULL), %d before", ndev, before);
}

void trafficClass(Ctx& c) {
  c.useContext(c.newContext(3));
  void* comm = c.link(0, 1, "traffic class 3");
  c.transfer(comm, 0, 1, 8192, 24);
}

}  // namespace

void addInitScenarios(std::vector<Scenario>& out) {
  out.push_back(
      {.area = "Init",
       .name = "RepeatedInitFinalize",
       .rule = Rule::InitPerCommunicator,
       .ranks = 1,
       .run = repeated,
       .summary = "10 init/devices/listen/finalize cycles while another context stays alive"});
  out.push_back(
      {.area = "Init",
       .name = "ReinitAfterLastFinalize",
       .rule = Rule::ReinitAfterLastFinalize,
       .ranks = 2,
       .run = reinitAfterLastFinalize,
       .summary = "every context finalized, init again on the same load: connections still work"});
  out.push_back({.area = "Init",
                 .name = "ContextPerCommunicator",
                 .rule = Rule::InitPerCommunicator,
                 .ranks = 2,
                 .needs = {.minAbi = 11},
                 .run = contextPerComm,
                 .summary = "two live contexts; finalizing one leaves the other working"});
  out.push_back({.area = "Init",
                 .name = "FinalizeNullContext",
                 .rule = Rule::InitPerCommunicator,
                 .ranks = 1,
                 .needs = {.minAbi = 11},
                 .run = finalizeNull,
                 .summary = "finalize(NULL) neither crashes nor breaks the plugin"});
  out.push_back({.area = "Init",
                 .name = "TrafficClassAccepted",
                 .rule = Rule::TrafficClassAccepted,
                 .ranks = 2,
                 .needs = {.minAbi = 10},
                 .run = trafficClass,
                 .summary = "a connection made under trafficClass 3 carries data"});
}

}  // namespace conformance
