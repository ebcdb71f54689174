// SPDX-License-Identifier: Apache-2.0
#include "scenario/rma_session.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "harness/wire.hpp"
#include "scenario/plugin_log.hpp"

namespace conformance {

RmaSession::RmaSession(Ctx& c, int nContexts, Rule rule) : c_(c) {
  table_ = static_cast<const ncclRma_v14_t*>(c.plugin().symbol("ncclRmaPlugin_v14"));
  if (table_ == nullptr) skip("the library exports no ncclRmaPlugin_v14");
  // NCCL has its net plugin initialized for the communicator before it
  // sets up GIN or RMA on it (src/init.cc), and a vendor's RMA may rely on
  // that (aws-ofi-nccl's refuses otherwise).
  c.comm();
  c.activity("RMA init()");
  uint64_t commId = 0x52aa0000ull;  // the same on every rank, as NCCL's comm hash
  CONF_OK(table_->init(&init_, commId, pluginLogger()), rule, "RMA init()");
  CONF_OK(table_->getProperties(0, &props_), rule, "RMA getProperties(0)");
  char handle[NCCL_GIN_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  c.activity("RMA listen(device 0)");
  CONF_OK(table_->listen(init_, 0, handle, &listenComm), rule, "RMA listen(device 0)");
  std::vector<std::string> all = c.allgather("RMA handles", std::string(handle, sizeof handle));
  std::vector<void*> handles;
  for (std::string& h : all) handles.push_back(h.data());
  // NCCL 2.30.7 passes the net plugin's context here, not the RMA init's
  // (src/rma/rma_proxy.cc: connect(comm->netContext, ...)).
  c.activity(format("RMA connect(%d ranks), collective", c.nranks()));
  CONF_OK(table_->connect(c.comm(), handles.data(), c.nranks(), c.rank(), listenComm, &collComm_),
          rule, "RMA connect() given the net plugin's context, as NCCL 2.30.7 gives it");
  CONF_EXPECT(collComm_ != nullptr, rule, "RMA connect() returned success and no collComm");
  CONF_OK(table_->closeListen(listenComm), rule, "RMA closeListen()");
  ncclRmaConfig_v14_t config{nContexts, NCCL_NET_TRAFFIC_CLASS_UNDEF, 1};
  c.activity(format("RMA createContext(%d contexts)", nContexts));
  CONF_OK(table_->createContext(collComm_, &config, &rmaCtx_), rule, "RMA createContext()");
  // Every rank has its context before any rank targets it.
  c.barrier("RMA connected");
}

RmaSession::~RmaSession() {
  // Best effort, as NCCL's teardown: a failure here was reported already
  // by the step that caused it.
  if (table_ == nullptr) return;
  if (rmaCtx_ != nullptr) table_->destroyContext(rmaCtx_);
  for (void* mh : mhandles_) table_->deregMrSym(collComm_, mh);
  if (collComm_ != nullptr) table_->closeColl(collComm_);
  if (init_ != nullptr) table_->finalize(init_);
}

void RmaSession::teardown(Rule rule, bool peerGone) {
  double start = nowSeconds();
  c_.activity("RMA teardown: destroyContext, deregMrSym, closeColl, finalize");
  auto check = [&](ncclResult_t res, const char* call) {
    if (res == ncclSuccess) return;
    CONF_EXPECT(peerGone, rule, "%s returned %s", call, resultText(res).c_str());
    c_.note(format("%s, after the peer died, returned %s", call, resultText(res).c_str()));
  };
  if (void* rmaCtx = std::exchange(rmaCtx_, nullptr)) {
    check(table_->destroyContext(rmaCtx), "RMA destroyContext()");
  }
  for (void* mh : std::exchange(mhandles_, {})) {
    check(table_->deregMrSym(collComm_, mh), "RMA deregMrSym()");
  }
  if (void* collComm = std::exchange(collComm_, nullptr)) {
    check(table_->closeColl(collComm), "RMA closeColl()");
  }
  if (void* init = std::exchange(init_, nullptr)) check(table_->finalize(init), "RMA finalize()");
  double took = nowSeconds() - start;
  CONF_EXPECT(took <= c_.waitLimit(), rule, "the RMA teardown took %.1f s (limit %.1f s)", took,
              c_.waitLimit());
}

void* RmaSession::reg(void* data, size_t size, Rule rule, int type) {
  void* mhandle = nullptr;
  const char* memory = type == NCCL_PTR_CUDA ? "GPU" : "host";
  c_.activity(format("RMA regMrSym(%zu B of %s memory)", size, memory));
  CONF_OK(table_->regMrSym(collComm_, data, size, type, 0, &mhandle), rule,
          format("RMA regMrSym(%zu B of %s memory)", size, memory));
  CONF_EXPECT(mhandle != nullptr, rule, "RMA regMrSym() returned success and no mhandle");
  mhandles_.push_back(mhandle);
  return mhandle;
}

void RmaSession::dereg(void* mhandle) {
  mhandles_.erase(std::find(mhandles_.begin(), mhandles_.end(), mhandle));
  CONF_OK(table_->deregMrSym(collComm_, mhandle), Rule::RmaConnectCollective, "RMA deregMrSym()");
}

namespace {
void* requestOrFail(ncclResult_t res, void* request, const std::string& call, Rule rule) {
  CONF_EXPECT(res == ncclSuccess, rule, "%s returned %s", call.c_str(), resultText(res).c_str());
  // NCCL's proxies test whatever comes back (src/rma/rma_proxy_progress.cc:
  // "returned success with NULL request" is an internal error).
  CONF_EXPECT(request != nullptr, Rule::RmaRequestsReturned,
              "%s returned success and a NULL request", call.c_str());
  return request;
}
}  // namespace

void* RmaSession::put(int context, uint64_t srcOff, void* srcMh, size_t size, uint64_t dstOff,
                      void* dstMh, int rank, const std::string& what, Rule rule) {
  void* request = nullptr;
  std::string call = "RMA iput(" + what + ")";
  c_.activity(call);
  ncclResult_t res = table_->iput(rmaCtx_, context, srcOff, srcMh, size, dstOff, dstMh,
                                  static_cast<uint32_t>(rank), &request);
  return requestOrFail(res, request, call, rule);
}

void* RmaSession::putSignal(int context, uint64_t srcOff, void* srcMh, size_t size, uint64_t dstOff,
                            void* dstMh, int rank, uint64_t signalOff, void* signalMh,
                            uint64_t value, uint32_t op, bool strong, const std::string& what,
                            Rule rule) {
  void* request = nullptr;
  std::string call = "RMA iputSignal(" + what + ")";
  c_.activity(call);
  ncclResult_t res = table_->iputSignal(rmaCtx_, context, srcOff, srcMh, size, dstOff, dstMh,
                                        static_cast<uint32_t>(rank), signalOff, signalMh, value, op,
                                        strong, &request);
  return requestOrFail(res, request, call, rule);
}

void RmaSession::signal(int context, int rank, uint64_t signalOff, void* signalMh,
                        const std::string& what, Rule rule) {
  wait(putSignal(context, 0, nullptr, 0, 0, nullptr, rank, signalOff, signalMh, 1,
                 NCCL_GIN_SIGNAL_OP_INC, true, what, rule),
       what, rule);
}

void* RmaSession::get(int context, uint64_t remoteOff, void* remoteMh, size_t size,
                      uint64_t localOff, void* localMh, int rank, const std::string& what,
                      Rule rule) {
  void* request = nullptr;
  std::string call = "RMA iget(" + what + ")";
  c_.activity(call);
  ncclResult_t res = table_->iget(rmaCtx_, context, remoteOff, remoteMh, size, localOff, localMh,
                                  static_cast<uint32_t>(rank), &request);
  return requestOrFail(res, request, call, rule);
}

void RmaSession::flush(int context, void* mhandle, int rank, const std::string& what, Rule rule) {
  void* request = nullptr;
  std::string call = "RMA iflush(" + what + ")";
  c_.activity(call);
  CONF_OK(table_->iflush(rmaCtx_, context, mhandle, static_cast<uint32_t>(rank), &request), rule,
          call);
  // NULL: nothing to wait for (src/gin/gin_host_proxy.cc takes it as done).
  if (request != nullptr) wait(request, call, rule);
}

void RmaSession::progress(Rule rule) {
  if (table_->rmaProgress != nullptr) {
    CONF_OK(table_->rmaProgress(rmaCtx_), rule, "RMA rmaProgress()");
  }
}

void RmaSession::wait(void* request, const std::string& what, Rule rule) {
  c_.activity("RMA test(" + what + ") until done");
  double end = nowSeconds() + c_.waitLimit();
  for (uint64_t polls = 1;; polls++) {
    int done = 0;
    ncclResult_t res = table_->test(collComm_, request, &done);
    CONF_EXPECT(res == ncclSuccess, rule, "RMA test(%s) returned %s", what.c_str(),
                resultText(res).c_str());
    if (done) return;
    progress(rule);
    if (polls % 64 == 0) {
      CONF_EXPECT(nowSeconds() < end, rule, "RMA test(%s) still not done after %.1f s",
                  what.c_str(), c_.waitLimit());
      sched_yield();
    }
  }
}

uint64_t RmaSession::awaitSignal(const volatile uint64_t* word, uint64_t expected,
                                 const std::string& what, Rule rule) {
  return awaitSignal([word] { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }, expected, what,
                     rule);
}

uint64_t RmaSession::awaitSignal(const std::function<uint64_t()>& read, uint64_t expected,
                                 const std::string& what, Rule rule) {
  c_.activity("waiting for " + what);
  double end = nowSeconds() + c_.waitLimit();
  for (uint64_t polls = 1;; polls++) {
    uint64_t seen = read();
    if (seen >= expected) return seen;
    progress(rule);
    if (polls % 64 == 0) {
      CONF_EXPECT(nowSeconds() < end, rule, "%s: the signal is %llu after %.1f s, expected %llu",
                  what.c_str(), static_cast<unsigned long long>(seen), c_.waitLimit(),
                  static_cast<unsigned long long>(expected));
      sched_yield();
    }
  }
}

}  // namespace conformance
