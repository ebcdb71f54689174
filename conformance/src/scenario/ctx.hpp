// SPDX-License-Identifier: Apache-2.0
// What a scenario's rank works with: the plugin seen through its v12 view,
// the control channel to the other ranks, the profile's parameters, and
// helpers that own every listen, comm and registration they create (all
// released when the scenario ends) and that time every call, so a call that
// blocks or a request that never completes is named in the failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/peer.hpp"
#include "ncclnet/host/loader.hpp"
#include "profile/profile.hpp"
#include "scenario/buffer.hpp"
#include "scenario/check.hpp"
#include "scenario/rules.hpp"

namespace conformance {

struct Handle {
  char bytes[NCCL_NET_HANDLE_MAXSIZE] = {};
};

// Marks the step a SHOULD scenario exercises, for as long as it lives: a
// crash inside it breaks only the scenario's SHOULD rule (crash_report.hpp).
class ShouldStep {
 public:
  ShouldStep();
  ~ShouldStep();
  ShouldStep(const ShouldStep&) = delete;
  ShouldStep& operator=(const ShouldStep&) = delete;
};

class Ctx {
 public:
  // `ncclNewest`: the newest ABI version of the NCCL being emulated (--nccl).
  Ctx(ncclnet::host::LoadedPlugin& plugin, Peer& peer, const Profile& profile, double deadlineSec,
      int ncclNewest);
  ~Ctx();
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;

  int rank() const { return peer_.rank(); }
  int nranks() const { return peer_.nranks(); }
  int version() const { return plugin_.version(); }
  int ncclNewestVersion() const { return ncclNewest_; }
  ncclnet::host::NetView& net() { return plugin_.net(); }
  ncclnet::host::LoadedPlugin& plugin() { return plugin_; }
  Peer& peer() { return peer_; }
  // Closes the rank's own handle on the plugin library (so a scenario can
  // see it really unloaded); nothing of the plugin may be used after it.
  void unloadPlugin();
  void setUnloader(std::function<void()> unload) { unload_ = std::move(unload); }
  const Profile& profile() const { return profile_; }

  // Limits, already scaled: a single call that should return at once, a
  // wait for one request or connection, a wait for the other ranks.
  double callLimit() const { return callLimit_; }
  double waitLimit() const { return waitLimit_; }
  double syncLimit() const { return syncLimit_; }

  // The context of this rank's communicator (init on first use; finalized
  // when the scenario ends).
  void* comm();
  // Another communicator's context (v11+: its own init); made current by
  // useContext() for the listens and connects that follow.
  void* newContext(int trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF);
  void useContext(void* context);
  void finalizeContext(void* context);
  int devices();
  const ncclNetProperties_v12_t& props(int dev = 0);
  int maxRecvs() { return props().maxRecvs; }

  // A SHOULD finding that must not cut the scenario short (a slow call, rule
  // 48): the scenario goes on, its MUST checks included, and the first such
  // finding is reported when the scenario has otherwise passed
  // (raiseDeferred, from the worker).
  void deferShould(Rule rule, const std::string& message);
  void raiseDeferred() const;

  void activity(const std::string& what) { peer_.activity(what); }
  void note(const std::string& text) { peer_.note(text); }
  // A counter the report shows per scenario (summed over the ranks).
  void count(const std::string& name, uint64_t n = 1) { peer_.count(name, n); }
  void barrier(const std::string& label) { peer_.barrier(label, syncLimit_); }
  std::vector<std::string> allgather(const std::string& label, const std::string& mine) {
    return peer_.allgather(label, mine, syncLimit_);
  }

  // ---- connections --------------------------------------------------------
  void* listen(int dev, Handle* handle);
  // One call each; a call slower than callLimit() breaks rule 48 (deferred).
  // An error breaks `rule`.
  void* connectOnce(int dev, Handle* handle, ncclNetDeviceHandle_v12_t** devComm, int attempt,
                    Rule rule = Rule::ConnectAcceptNeverBlock);
  void* acceptOnce(void* listenComm, ncclNetDeviceHandle_v12_t** devComm, int attempt,
                   Rule rule = Rule::ConnectAcceptNeverBlock);
  // Retried until done, within waitLimit(). An error, or no comm in time,
  // breaks `rule` (a fault scenario names its own); a slow call breaks rule
  // 48 (deferred).
  void* connect(int dev, Handle* handle, Rule rule = Rule::ConnectAcceptNeverBlock);
  void* accept(void* listenComm, Rule rule = Rule::ConnectAcceptNeverBlock);
  // A connection from rank `src` to rank `dst`, both calling it: returns the
  // sendComm on src, the recvComm on dst (listen closed at once, as NCCL
  // does), nullptr elsewhere.
  void* link(int src, int dst, const std::string& label, int dev = 0);
  void closeListen(void* listenComm);
  void closeSend(void* sendComm);
  void closeRecv(void* recvComm);
  // Close without judging the result (error-path scenarios); each call
  // slower than callLimit() breaks rule 48 (deferred).
  ncclResult_t tryCloseSend(void* sendComm);
  ncclResult_t tryCloseRecv(void* recvComm);

  // ---- memory -------------------------------------------------------------
  // Host memory: regMr(NCCL_PTR_HOST). GPU memory: regMr(NCCL_PTR_CUDA), and
  // regMrDmaBuf of a dma-buf fd whose byte `offset` is `data` (the fd stays
  // the caller's). Each counts one hostRegistrations, cudaRegistrations or
  // dmabufRegistrations for the report.
  void* reg(void* comm, void* data, size_t size);
  void* regCuda(void* comm, void* data, size_t size);
  void* regDmaBuf(void* comm, void* data, size_t size, uint64_t offset, int fd);
  void dereg(void* comm, void* mhandle);
  // Deregisters without judging the result (error-path scenarios).
  ncclResult_t tryDereg(void* comm, void* mhandle);

  // ---- data path ----------------------------------------------------------
  // Posted, retrying a NULL request (back-pressure) within waitLimit().
  void* isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
              const std::string& what);
  void* irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
              const std::string& what);
  // One isend call: the request, or NULL when the plugin cannot post it yet
  // (rule 29: call again later; e.g. a receiver-driven plugin before the
  // matching irecv is posted). Scenarios that post sends before the
  // receives use it so that the receiver keeps progressing meanwhile.
  void* isendOnce(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                  const std::string& what);
  // Polls test() until done. Returns the result of the last test(); a request
  // still not done after `limit` (default waitLimit()) breaks `rule`.
  ncclResult_t wait(void* request, int* sizes, const std::string& what,
                    Rule rule = Rule::CompletionReportsSizes, double limit = 0);
  // Sends `size` patterned bytes from rank src and receives them on rank dst,
  // verifying every byte; both ranks call it with their end of the link.
  void transfer(void* comm, int src, int dst, size_t size, uint64_t seed, int tag = 0);

 private:
  struct Mr {
    void* comm;
    void* mhandle;
  };
  void forget(std::vector<void*>& list, void* p);
  void releaseAll();

  ncclnet::host::LoadedPlugin& plugin_;
  Peer& peer_;
  const Profile& profile_;
  double callLimit_;
  std::optional<Violation> deferred_;  // the first deferred SHOULD finding
  double waitLimit_;
  double syncLimit_;
  int ncclNewest_;
  // What isend/irecv get as phandles, as NCCL's proxy passes one per step
  // (v10+; the view drops them for older tables): a plugin may hand it to
  // the profiler callback's start event.
  alignas(16) char phandleStorage_[16] = {};
  void* const phandle_ = phandleStorage_;
  std::function<void()> unload_;
  std::vector<void*> contexts_;
  void* current_ = nullptr;
  bool haveCurrent_ = false;
  std::vector<ncclNetProperties_v12_t> props_;
  std::vector<void*> listens_, sends_, recvs_;
  std::vector<Mr> mrs_;
};

}  // namespace conformance
