// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the interposer, every call forwarded, checked and traced.
#include "checker.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/params.hpp"

namespace ncclnet::check {

namespace {

// Knobs read at load time, before NCCL has handed over its logger: read in
// silence, they are read (and announced) again at init.
void silentLogger(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

unsigned long long id(uint64_t value) {
  return static_cast<unsigned long long>(value);
}

// "a,b,c" of the first n values.
template <class T>
std::string listText(const T* values, int n) {
  std::string text;
  for (int i = 0; i < n; i++) {
    if (i > 0) text += ',';
    text += std::to_string(values[i]);
  }
  return text.empty() ? "-" : text;
}

// The most buffers one test reports (NCCL_PROXY_MAX_SUBS).
constexpr int kMaxSizes = kMaxGroupedRecvs;
void* const kOptionalCompletion = reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION);

}  // namespace

Checker& Checker::instance() {
  static Checker checker;
  return checker;
}

Checker::~Checker() {
  watchdog_.reset();  // before the ledger it reads
  trace_.flush();
}

void Checker::load() {
  Config config;
  ParamTable params(Logger(silentLogger, "NET/check"));
  readKnobs(params, kKnobs, &config);  // bad values are reported at init
  if (config.plugin.empty()) {
    loadProblem_ =
        "NCCLNET_CHECK_PLUGIN is not set: it names the plugin to check (a name x for "
        "libnccl-net-x.so, or a path)";
  } else {
    host::LoaderOptions options;
    options.pluginList = config.plugin;
    options.netName = std::string();  // NCCL_NET names the wrapped plugin: it matches by itself
    options.checkInit = false;        // NCCL inits it later, through this library
    options.logger = Logger(silentLogger, "NET/check");
    host::Loader loader(options);
    if (loader.load(&inner_) != ncclSuccess) {
      loadProblem_ = "cannot load the plugin NCCLNET_CHECK_PLUGIN=" + config.plugin +
                     " names: " + loader.report().outcome;
      inner_.reset();
    } else {
      std::snprintf(name_, sizeof(name_), "%s", inner_->name() ? inner_->name() : kOwnName);
    }
  }
  ledger_ = std::make_unique<Ledger>(reporter_, provides(host::Optional::IrecvConsumed));
}

void* Checker::innerSymbol(const char* name) const {
  return inner_ != nullptr ? inner_->symbol(name) : nullptr;
}

bool Checker::provides(host::Optional op) const {
  return inner_ != nullptr && inner_->net().provides(op);
}

ncclResult_t Checker::start(ncclDebugLogger_t logFn) {
  std::lock_guard<std::mutex> lock(startMutex_);
  Logger logger(logFn, "NET/check");
  reporter_.setLogger(logger);
  if (started_) return startResult_;
  started_ = true;
  if (inner_ == nullptr) {
    NCCLNET_WARN(logger, "%s", loadProblem_.c_str());
    return startResult_ = ncclInvalidUsage;
  }
  ParamTable params(logger);
  startResult_ = readKnobs(params, kKnobs, &config_);
  if (startResult_ != ncclSuccess) return startResult_;
  blockLimit_ = std::chrono::microseconds(config_.blockUs);
  preciseTiming_ = blockLimit_ < kCoarseEnough;
  reporter_.setAbortOnViolation(config_.abortOnViolation);
  if (!config_.traceDir.empty()) {
    std::string error;
    if (!trace_.open(config_.traceDir, name_, inner_->version(), &error)) {
      NCCLNET_WARN(logger, "NCCLNET_CHECK_TRACE: %s", error.c_str());
      return startResult_ = ncclSystemError;
    }
  }
  if (config_.hangSec > 0) {
    watchdog_ = std::make_unique<Watchdog>(*ledger_, reporter_, config_.hangSec);
    std::string error;
    if (!watchdog_->start(&error)) {
      NCCLNET_WARN(logger, "NCCLNET_CHECK_HANG_S: %s", error.c_str());
      watchdog_.reset();
      return startResult_ = ncclSystemError;
    }
  }
  NCCLNET_INFO(logger, NCCL_INIT | NCCL_NET,
               "checking plugin %s (%s, ABI v%d); block bound %d us, hang bound %d s%s%s", name_,
               inner_->path().c_str(), inner_->version(), config_.blockUs, config_.hangSec,
               trace_.enabled() ? ", trace " : "", trace_.path().c_str());
  return startResult_;
}

uint64_t Checker::connectHash(const void* handle) {
  if (handle == nullptr) return 0;
  std::lock_guard<std::mutex> lock(connectMutex_);
  auto [it, fresh] = connecting_.try_emplace(handle, 0);
  if (fresh) it->second = handleHash(handle);
  return it->second;
}

void Checker::connectEnded(const void* handle) {
  std::lock_guard<std::mutex> lock(connectMutex_);
  connecting_.erase(handle);
}

std::string Checker::placesText(const std::shared_ptr<CommState>& comm, int n, void* const* data,
                                void* const* mhandles) const {
  if (data == nullptr || mhandles == nullptr || n <= 0) return "m=- o=-";
  std::string ids = "m=", offsets = "o=";
  for (int i = 0; i < n; i++) {
    long long offset = 0;
    uint64_t mrId = ledger_->placeInMr(comm, mhandles[i], data[i], &offset);
    ids += (i ? "," : "") + std::to_string(mrId);
    offsets += (i ? "," : "") + std::to_string(offset);
  }
  return ids + " " + offsets;
}

Clock::time_point Checker::timed(const CheckRule& rule, const char* call, Clock::time_point start,
                                 const CommState* comm) {
  Clock::time_point end = now();
  Clock::duration took = end - start;
  if (took <= blockLimit_) return end;
  char what[160];
  std::snprintf(
      what, sizeof(what), "%s took %lld us, more than NCCLNET_CHECK_BLOCK_US=%d", call,
      static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(took).count()),
      config_.blockUs);
  reporter_.violation(rule, comm ? comm->describe() : std::string(), std::string(), what);
  return end;
}

ncclResult_t Checker::refuse(const char* fn, const char* why) {
  Logger log = reporter_.logger();
  NCCLNET_WARN(log, "%s: %s", fn, why);
  return ncclInternalError;
}

// ---- life cycle and devices --------------------------------------------------

ncclResult_t Checker::init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                           ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
  ncclResult_t res = start(logFn);
  if (res != ncclSuccess) return res;
  res = net().init(ctx, commId, config, logFn, profFn);
  trace_.line("init commId=%llx tc=%d rc=%d", id(commId), config ? config->trafficClass : -1,
              static_cast<int>(res));
  return res;
}

ncclResult_t Checker::initOnce(ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
  ncclResult_t res = start(logFn);
  if (res != ncclSuccess || processContext() != nullptr) return res;
  ncclNetCommConfig_v12_t config{};
  config.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF;
  void* ctx = nullptr;
  res = net().init(&ctx, 0, &config, logFn, profFn);
  trace_.line("init commId=0 tc=-1 rc=%d", static_cast<int>(res));
  if (res == ncclSuccess) {
    std::lock_guard<std::mutex> lock(classMutex_);
    legacyLogFn_ = logFn;
    legacyProfFn_ = profFn;
    processCtx_.store(ctx, std::memory_order_release);
  }
  return res;
}

void* Checker::classContext(int trafficClass) {
  void* process = processContext();
  if (trafficClass == NCCL_NET_TRAFFIC_CLASS_UNDEF || process == nullptr) return process;
  std::lock_guard<std::mutex> lock(classMutex_);
  auto it = classContexts_.find(trafficClass);
  if (it != classContexts_.end()) return it->second;
  ncclNetCommConfig_v12_t config{};
  config.trafficClass = trafficClass;
  void* ctx = nullptr;
  ncclResult_t res = net().init(&ctx, 0, &config, legacyLogFn_, legacyProfFn_);
  trace_.line("init commId=0 tc=%d rc=%d", trafficClass, static_cast<int>(res));
  if (res != ncclSuccess) {
    Logger log = reporter_.logger();
    NCCLNET_WARN(log, "connect: no context for traffic class %d: init returned %d", trafficClass,
                 static_cast<int>(res));
    return nullptr;
  }
  classContexts_.emplace(trafficClass, ctx);
  return ctx;
}

ncclResult_t Checker::finalize(void* ctx) {
  if (inner_ == nullptr) return ncclInvalidUsage;  // init failed and said why
  ncclResult_t res = net().finalize(ctx);
  trace_.line("finalize rc=%d", static_cast<int>(res));
  Ledger::TestTally tally = ledger_->testTally();
  if (tally.completed > 0) {
    NCCLNET_INFO(reporter_.logger(), NCCL_NET,
                 "ncclnet-check: %llu requests done after %llu test calls (%.1f each)",
                 static_cast<unsigned long long>(tally.completed),
                 static_cast<unsigned long long>(tally.tests),
                 static_cast<double>(tally.tests) / static_cast<double>(tally.completed));
    Ledger::PeakInFlight peak = ledger_->peakInFlight();
    NCCLNET_INFO(reporter_.logger(), NCCL_NET,
                 "ncclnet-check: at most %d requests in flight on one sendComm, %d on one recvComm",
                 peak.send, peak.recv);
  }
  trace_.flush();
  return res;
}

ncclResult_t Checker::devices(int* ndev) {
  if (inner_ == nullptr) return ncclInvalidUsage;
  return net().devices(ndev);
}

ncclResult_t Checker::getProperties(int dev, ncclNetProperties_v12_t* props) {
  if (inner_ == nullptr) return ncclInvalidUsage;
  return net().getProperties(dev, props);
}

ncclResult_t Checker::makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
  return net().makeVDevice(d, props);
}

ncclResult_t Checker::setNetAttr(void* ctx, ncclNetAttr_v12_t* attr) {
  return net().setNetAttr(ctx, attr);
}

// ---- connections ---------------------------------------------------------------

ncclResult_t Checker::listen(void* ctx, int dev, void* handle, void** listenComm) {
  Clock::time_point start = now();
  ncclResult_t res = net().listen(ctx, dev, handle, listenComm);
  timed(rules::kCallsReturnPromptly, "listen", start, nullptr);
  uint64_t commId = 0;
  if (res == ncclSuccess && listenComm != nullptr && *listenComm != nullptr) {
    commId = ledger_->addListen(*listenComm, dev);
  }
  trace_.line("listen c=%llu dev=%d h=%016llx rc=%d", id(commId), dev,
              id(commId != 0 && handle != nullptr ? handleHash(handle) : 0), static_cast<int>(res));
  return res;
}

ncclResult_t Checker::connect(void* ctx, int dev, void* handle, void** sendComm,
                              ncclNetDeviceHandle_v12_t** sendDevComm) {
  const uint64_t hash = trace_.enabled() ? connectHash(handle) : 0;
  Clock::time_point start = now();
  ncclResult_t res = net().connect(ctx, dev, handle, sendComm, sendDevComm);
  timed(rules::kCallsReturnPromptly, "connect", start, nullptr);
  uint64_t commId = 0;
  if (res == ncclSuccess && sendComm != nullptr && *sendComm != nullptr) {
    ncclNetProperties_v12_t props{};
    int maxRecvs = net().getProperties(dev, &props) == ncclSuccess ? props.maxRecvs : 1;
    commId = ledger_->addSend(*sendComm, dev, maxRecvs);
  }
  if (trace_.enabled()) {
    if (commId != 0 || res != ncclSuccess) connectEnded(handle);
    trace_.line("connect c=%llu dev=%d h=%016llx rc=%d", id(commId), dev, id(hash),
                static_cast<int>(res));
  }
  return res;
}

ncclResult_t Checker::accept(void* listenComm, void** recvComm,
                             ncclNetDeviceHandle_v12_t** recvDevComm) {
  std::shared_ptr<CommState> listen = ledger_->find(listenComm, CommKind::Listen, "accept");
  Clock::time_point start = now();
  ncclResult_t res = net().accept(listenComm, recvComm, recvDevComm);
  timed(rules::kCallsReturnPromptly, "accept", start, listen.get());
  uint64_t commId = 0;
  if (res == ncclSuccess && recvComm != nullptr && *recvComm != nullptr) {
    commId = ledger_->addRecv(*recvComm, listenComm);
  }
  trace_.line("accept l=%llu c=%llu rc=%d", id(listen ? listen->id : 0), id(commId),
              static_cast<int>(res));
  return res;
}

ncclResult_t Checker::closeSend(void* sendComm) {
  uint64_t commId = ledger_->close(sendComm, CommKind::Send, "closeSend");
  ncclResult_t res = net().closeSend(sendComm);
  trace_.line("closeSend c=%llu rc=%d", id(commId), static_cast<int>(res));
  return res;
}

ncclResult_t Checker::closeRecv(void* recvComm) {
  uint64_t commId = ledger_->close(recvComm, CommKind::Recv, "closeRecv");
  ncclResult_t res = net().closeRecv(recvComm);
  trace_.line("closeRecv c=%llu rc=%d", id(commId), static_cast<int>(res));
  return res;
}

ncclResult_t Checker::closeListen(void* listenComm) {
  uint64_t commId = ledger_->close(listenComm, CommKind::Listen, "closeListen");
  ncclResult_t res = net().closeListen(listenComm);
  trace_.line("closeListen c=%llu rc=%d", id(commId), static_cast<int>(res));
  return res;
}

// ---- registration ----------------------------------------------------------------

ncclResult_t Checker::regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  std::shared_ptr<CommState> state = ledger_->findConnected(comm, "regMr");
  ncclResult_t res = net().regMr(comm, data, size, type, mhandle);
  uint64_t mrId = 0;
  if (res == ncclSuccess && state != nullptr && mhandle != nullptr) {
    mrId = ledger_->addMr(state, *mhandle, data);
  }
  trace_.line("regMr c=%llu m=%llu size=%zu type=%d rc=%d", id(state ? state->id : 0), id(mrId),
              size, type, static_cast<int>(res));
  return res;
}

ncclResult_t Checker::regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset,
                                  int fd, void** mhandle) {
  std::shared_ptr<CommState> state = ledger_->findConnected(comm, "regMrDmaBuf");
  ncclResult_t res = net().regMrDmaBuf(comm, data, size, type, offset, fd, mhandle);
  uint64_t mrId = 0;
  if (res == ncclSuccess && state != nullptr && mhandle != nullptr) {
    mrId = ledger_->addMr(state, *mhandle, data);
  }
  trace_.line("regMrDmaBuf c=%llu m=%llu size=%zu type=%d offset=%llu rc=%d",
              id(state ? state->id : 0), id(mrId), size, type, id(offset), static_cast<int>(res));
  return res;
}

ncclResult_t Checker::deregMr(void* comm, void* mhandle) {
  std::shared_ptr<CommState> state = ledger_->findConnected(comm, "deregMr");
  uint64_t mrId = state ? ledger_->beforeDereg(state, mhandle) : 0;
  ncclResult_t res = net().deregMr(comm, mhandle);
  if (res == ncclSuccess && state != nullptr) ledger_->dropMr(state, mhandle);
  trace_.line("deregMr c=%llu m=%llu rc=%d", id(state ? state->id : 0), id(mrId),
              static_cast<int>(res));
  return res;
}

ncclResult_t Checker::getDeviceMr(void* comm, void* mhandle, void** dptr) {
  return net().getDeviceMr(comm, mhandle, dptr);
}

// ---- data --------------------------------------------------------------------------

ncclResult_t Checker::isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                            void* phandle, void** request) {
  std::shared_ptr<CommState> comm =
      ledger_->beforePost(sendComm, PostKind::Send, 1, &mhandle, "isend");
  Clock::time_point start = now();
  ncclResult_t res = net().isend(sendComm, data, size, tag, mhandle, phandle, request);
  Clock::time_point end = timed(rules::kCallsReturnPromptly, "isend", start, comm.get());
  uint64_t requestId = 0;
  if (res == ncclSuccess && request != nullptr) {
    requestId = ledger_->afterPost(comm, PostKind::Send, 1, &size, &tag, &mhandle, *request, end);
  }
  if (trace_.enabled()) {
    long long offset = 0;
    uint64_t mrId = ledger_->placeInMr(comm, mhandle, data, &offset);
    trace_.line("isend c=%llu r=%llu size=%zu tag=%d m=%llu o=%lld rc=%d", id(comm ? comm->id : 0),
                id(requestId), size, tag, id(mrId), offset, static_cast<int>(res));
  }
  return res;
}

ncclResult_t Checker::irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags,
                            void** mhandles, void** phandles, void** request) {
  std::shared_ptr<CommState> comm =
      ledger_->beforePost(recvComm, PostKind::Recv, n, mhandles, "irecv");
  const bool hinted = request != nullptr && *request == kOptionalCompletion;
  Clock::time_point start = now();
  ncclResult_t res = net().irecv(recvComm, n, data, sizes, tags, mhandles, phandles, request);
  Clock::time_point end = timed(rules::kCallsReturnPromptly, "irecv", start, comm.get());
  uint64_t requestId = 0;
  if (res == ncclSuccess && request != nullptr) {
    if (hinted && *request == kOptionalCompletion) {
      reporter_.violation(rules::kNullRequestRetry, comm ? comm->describe() : std::string(), "",
                          "irecv left the optional-completion preset (0x1) in *request: NCCL "
                          "would test it as a request");
    } else {
      requestId = ledger_->afterPost(comm, PostKind::Recv, n, sizes, tags, mhandles, *request, end);
    }
  }
  if (trace_.enabled()) {
    int shown = std::max(0, std::min(n, kMaxSizes));
    trace_.line("irecv c=%llu r=%llu n=%d sizes=%s tags=%s %s rc=%d", id(comm ? comm->id : 0),
                id(requestId), n, sizes ? listText(sizes, shown).c_str() : "-",
                tags ? listText(tags, shown).c_str() : "-",
                placesText(comm, shown, data, mhandles).c_str(), static_cast<int>(res));
  }
  return res;
}

ncclResult_t Checker::iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                             void** request) {
  std::shared_ptr<CommState> comm =
      ledger_->beforePost(recvComm, PostKind::Flush, n, mhandles, "iflush");
  ncclResult_t res = net().iflush(recvComm, n, data, sizes, mhandles, request);
  uint64_t requestId = 0;
  if (res == ncclSuccess && request != nullptr) {
    std::size_t flushed[kKeptBuffers] = {};
    for (int i = 0; i < std::min(n, kKeptBuffers) && sizes != nullptr; i++) {
      flushed[i] = static_cast<size_t>(std::max(0, sizes[i]));
    }
    requestId = ledger_->afterPost(comm, PostKind::Flush, n, flushed, nullptr, mhandles, *request);
  }
  if (trace_.enabled()) {
    int shown = std::max(0, std::min(n, kMaxSizes));
    trace_.line("iflush c=%llu r=%llu n=%d sizes=%s %s rc=%d", id(comm ? comm->id : 0),
                id(requestId), n, sizes ? listText(sizes, shown).c_str() : "-",
                placesText(comm, shown, data, mhandles).c_str(), static_cast<int>(res));
  }
  return res;
}

ncclResult_t Checker::test(void* request, int* done, int* sizes) {
  Clock::time_point start = now();
  TestTicket ticket = ledger_->beforeTest(request, start);
  // The plugin writes into an array preset to -1, so that a buffer of a
  // grouped receive it did not report shows (rule 31). NULL stays NULL.
  int reported[kMaxSizes];
  const int n = std::max(1, std::min(ticket.n, kMaxSizes));
  if (sizes != nullptr) std::fill(reported, reported + kMaxSizes, -1);
  ncclResult_t res = net().test(request, done, sizes ? reported : nullptr);
  timed(rules::kCallsReturnPromptly, "test", start, nullptr);
  int isDone = done != nullptr ? *done : 0;
  if (ticket.known) ledger_->afterTest(request, res, isDone, sizes ? reported : nullptr);
  if (sizes != nullptr && (isDone || res != ncclSuccess)) {
    for (int i = 0; i < n; i++) sizes[i] = reported[i] < 0 ? 0 : reported[i];
  }
  if (trace_.enabled() && (isDone || res != ncclSuccess)) {
    trace_.line("test r=%llu done=%d sizes=%s rc=%d", id(ticket.id), isDone,
                sizes ? listText(reported, n).c_str() : "-", static_cast<int>(res));
  }
  return res;
}

ncclResult_t Checker::irecvConsumed(void* recvComm, int n, void* request) {
  uint64_t commId = ledger_->consumed(recvComm, n, request);
  ncclResult_t res = net().irecvConsumed(recvComm, n, request);
  trace_.line("irecvConsumed c=%llu n=%d rc=%d", id(commId), n, static_cast<int>(res));
  return res;
}

}  // namespace ncclnet::check
