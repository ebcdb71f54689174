// SPDX-License-Identifier: Apache-2.0
// Scenario helpers: owned resources, timed calls, verified transfers.
#include "scenario/ctx.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "harness/crash_report.hpp"
#include "harness/wire.hpp"
#include "scenario/plugin_log.hpp"

namespace conformance {

namespace {
constexpr int kMaxGroupedBuffers = 64;  // NCCL_PROXY_MAX_SUBS: the most n NCCL passes irecv

std::string ptr(const void* p) {
  return format("%p", p);
}
}  // namespace

ShouldStep::ShouldStep() {
  crash::setShouldStep(true);
}

ShouldStep::~ShouldStep() {
  crash::setShouldStep(false);
}

Ctx::Ctx(ncclnet::host::LoadedPlugin& plugin, Peer& peer, const Profile& profile,
         double deadlineSec, int ncclNewest)
    : plugin_(plugin), peer_(peer), profile_(profile), ncclNewest_(ncclNewest) {
  // A non-blocking call returns in far less than a second even on a loaded
  // machine; waits end well before the coordinator's deadline so that the
  // rank that sees the problem names it.
  callLimit_ = 1.0 * profile.timeScale;
  waitLimit_ = deadlineSec * 0.5;
  syncLimit_ = deadlineSec * 0.7;
}

Ctx::~Ctx() {
  releaseAll();
}

void Ctx::deferShould(Rule rule, const std::string& message) {
  if (deferred_) return;
  deferred_ = Violation{rule, message};
  note("SHOULD finding, reported at the end: " + ruleLabel(rule) + ": " + message);
}

void Ctx::raiseDeferred() const {
  if (deferred_) throw *deferred_;
}

void Ctx::releaseAll() {
  activity("teardown: deregMr, closeSend/closeRecv/closeListen, finalize");
  // NCCL's order: deregister, close the comms, then the listens, finalize.
  for (auto it = mrs_.rbegin(); it != mrs_.rend(); ++it) net().deregMr(it->comm, it->mhandle);
  mrs_.clear();
  for (void* c : sends_) net().closeSend(c);
  for (void* c : recvs_) net().closeRecv(c);
  for (void* l : listens_) net().closeListen(l);
  sends_.clear();
  recvs_.clear();
  listens_.clear();
  for (void* c : contexts_) net().finalize(c);
  contexts_.clear();
  haveCurrent_ = false;
}

void Ctx::unloadPlugin() {
  releaseAll();
  if (!unload_) skip("this host cannot unload the plugin it runs the scenario on");
  activity("dlclose of the plugin (the rank's last handle)");
  unload_();
  unload_ = nullptr;
}

void Ctx::forget(std::vector<void*>& list, void* p) {
  list.erase(std::remove(list.begin(), list.end(), p), list.end());
}

void* Ctx::comm() {
  if (!haveCurrent_) useContext(newContext());
  return current_;
}

void* Ctx::newContext(int trafficClass) {
  ncclNetCommConfig_v12_t config{trafficClass};
  void* context = nullptr;
  activity(format("init(trafficClass %d)", trafficClass));
  uint64_t commId = 0x5eed0000ull + static_cast<uint64_t>(rank()) * 64 + contexts_.size();
  CONF_OK(net().init(&context, commId, &config, pluginLogger(), ncclnet::host::profilerCallback()),
          Rule::InitPerCommunicator, "init()");
  contexts_.push_back(context);
  return context;
}

void Ctx::useContext(void* context) {
  current_ = context;
  haveCurrent_ = true;
}

void Ctx::finalizeContext(void* context) {
  contexts_.erase(std::find(contexts_.begin(), contexts_.end(), context));
  if (haveCurrent_ && current_ == context) haveCurrent_ = false;
  activity("finalize()");
  CONF_OK(net().finalize(context), Rule::InitPerCommunicator, "finalize()");
}

int Ctx::devices() {
  comm();
  int n = 0;
  CONF_OK(net().devices(&n), Rule::DevicesReported, "devices()");
  CONF_EXPECT(n >= 1, Rule::DevicesReported, "devices() reported %d devices", n);
  return n;
}

const ncclNetProperties_v12_t& Ctx::props(int dev) {
  if (props_.empty()) {
    int n = devices();
    props_.resize(static_cast<size_t>(n));
    for (int d = 0; d < n; d++) {
      std::memset(static_cast<void*>(&props_[d]), 0, sizeof(props_[d]));
      CONF_OK(net().getProperties(d, &props_[d]), Rule::DevicesReported,
              format("getProperties(%d)", d));
    }
  }
  CONF_EXPECT(dev >= 0 && dev < static_cast<int>(props_.size()), Rule::DevicesReported,
              "device %d does not exist", dev);
  return props_[static_cast<size_t>(dev)];
}

void* Ctx::listen(int dev, Handle* handle) {
  void* c = comm();
  void* listenComm = nullptr;
  activity(format("listen(dev %d)", dev));
  double start = nowSeconds();
  CONF_OK(net().listen(c, dev, handle->bytes, &listenComm), Rule::ListenNeverBlocks,
          format("listen(dev %d)", dev));
  double took = nowSeconds() - start;
  if (took > callLimit_)
    deferShould(Rule::CallsReturnPromptly,
                format("listen(dev %d) took %.2f s: it must not block", dev, took));
  CONF_EXPECT(listenComm != nullptr, Rule::ListenNeverBlocks,
              "listen(dev %d) succeeded but left listenComm NULL", dev);
  listens_.push_back(listenComm);
  return listenComm;
}

void* Ctx::connectOnce(int dev, Handle* handle, ncclNetDeviceHandle_v12_t** devComm, int attempt,
                       Rule rule) {
  void* sendComm = nullptr;
  void* context = comm();  // first, so that its init is not the activity shown
  activity(format("connect(dev %d), call #%d", dev, attempt));
  double start = nowSeconds();
  CONF_OK(net().connect(context, dev, handle->bytes, &sendComm, devComm), rule,
          format("connect(dev %d) call #%d", dev, attempt));
  double took = nowSeconds() - start;
  if (took > callLimit_)
    deferShould(Rule::CallsReturnPromptly,
                format("connect(dev %d) call #%d blocked for %.2f s", dev, attempt, took));
  if (sendComm != nullptr) sends_.push_back(sendComm);
  return sendComm;
}

void* Ctx::acceptOnce(void* listenComm, ncclNetDeviceHandle_v12_t** devComm, int attempt,
                      Rule rule) {
  void* recvComm = nullptr;
  activity(format("accept(listenComm %s), call #%d", ptr(listenComm).c_str(), attempt));
  double start = nowSeconds();
  CONF_OK(net().accept(listenComm, &recvComm, devComm), rule, format("accept() call #%d", attempt));
  double took = nowSeconds() - start;
  if (took > callLimit_)
    deferShould(Rule::CallsReturnPromptly,
                format("accept() call #%d blocked for %.2f s", attempt, took));
  if (recvComm != nullptr) recvs_.push_back(recvComm);
  return recvComm;
}

void* Ctx::connect(int dev, Handle* handle, Rule rule) {
  ncclNetDeviceHandle_v12_t* devComm = nullptr;
  double limit = nowSeconds() + waitLimit_;
  for (int attempt = 1;; attempt++) {
    void* sendComm = connectOnce(dev, handle, &devComm, attempt, rule);
    if (sendComm != nullptr) return sendComm;
    CONF_EXPECT(nowSeconds() < limit, rule,
                "connect(dev %d) still not done after %d calls in %.1f s", dev, attempt,
                waitLimit_);
    sched_yield();
  }
}

void* Ctx::accept(void* listenComm, Rule rule) {
  ncclNetDeviceHandle_v12_t* devComm = nullptr;
  double limit = nowSeconds() + waitLimit_;
  for (int attempt = 1;; attempt++) {
    void* recvComm = acceptOnce(listenComm, &devComm, attempt, rule);
    if (recvComm != nullptr) return recvComm;
    CONF_EXPECT(nowSeconds() < limit, rule, "accept() still not done after %d calls in %.1f s",
                attempt, waitLimit_);
    sched_yield();
  }
}

void* Ctx::link(int src, int dst, const std::string& label, int dev) {
  Handle handle;
  void* listenComm = nullptr;
  if (rank() == dst) listenComm = listen(dev, &handle);
  std::vector<std::string> all = allgather(
      label + ": handle", rank() == dst ? std::string(handle.bytes, sizeof(handle.bytes)) : "");
  if (rank() == src) {
    std::memcpy(handle.bytes, all[static_cast<size_t>(dst)].data(), sizeof(handle.bytes));
    return connect(dev, &handle);
  }
  if (rank() != dst) return nullptr;
  void* recvComm = accept(listenComm);
  closeListen(listenComm);
  return recvComm;
}

void Ctx::closeListen(void* listenComm) {
  forget(listens_, listenComm);
  activity("closeListen()");
  CONF_OK(net().closeListen(listenComm), Rule::ListenNeverBlocks, "closeListen()");
}

void Ctx::closeSend(void* sendComm) {
  forget(sends_, sendComm);
  activity("closeSend()");
  CONF_OK(net().closeSend(sendComm), Rule::DeregMrReleases, "closeSend()");
}

void Ctx::closeRecv(void* recvComm) {
  forget(recvs_, recvComm);
  activity("closeRecv()");
  CONF_OK(net().closeRecv(recvComm), Rule::DeregMrReleases, "closeRecv()");
}

ncclResult_t Ctx::tryCloseSend(void* sendComm) {
  forget(sends_, sendComm);
  activity("closeSend() of a failed connection");
  double start = nowSeconds();
  ncclResult_t res = net().closeSend(sendComm);
  double took = nowSeconds() - start;
  if (took > callLimit_)
    deferShould(Rule::CallsReturnPromptly,
                format("closeSend() of a failed connection took %.2f s", took));
  return res;
}

ncclResult_t Ctx::tryCloseRecv(void* recvComm) {
  forget(recvs_, recvComm);
  activity("closeRecv() of a failed connection");
  double start = nowSeconds();
  ncclResult_t res = net().closeRecv(recvComm);
  double took = nowSeconds() - start;
  if (took > callLimit_)
    deferShould(Rule::CallsReturnPromptly,
                format("closeRecv() of a failed connection took %.2f s", took));
  return res;
}

// NCCL registers only buffers that hold bytes: a connection's buffers exist
// only when their size is not 0 (src/transport/net.cc sendProxyConnect and
// recvProxyConnect register `if (resources->buffers[p])`), and a zero-byte
// operation is posted from them. So a zero-byte message here goes out of a
// registration of at least one byte (Buffer keeps guard pages around every
// buffer), and no plugin is asked for regMr of 0 bytes, which NCCL's own IB
// transport refuses by assert (net_ib.cc ncclIbRegMrDmaBufInternal).
namespace {
size_t registeredSize(size_t size) {
  return std::max<size_t>(size, 1);
}
}  // namespace

void* Ctx::reg(void* comm, void* data, size_t size) {
  void* mhandle = nullptr;
  size = registeredSize(size);
  activity(format("regMr(%zu B, HOST)", size));
  CONF_OK(net().regMr(comm, data, size, NCCL_PTR_HOST, &mhandle), Rule::RegMrHostAndCuda,
          format("regMr(%zu B, NCCL_PTR_HOST)", size));
  mrs_.push_back(Mr{comm, mhandle});
  count("hostRegistrations");
  return mhandle;
}

void* Ctx::regCuda(void* comm, void* data, size_t size) {
  void* mhandle = nullptr;
  activity(format("regMr(%zu B, CUDA)", size));
  CONF_OK(net().regMr(comm, data, size, NCCL_PTR_CUDA, &mhandle), Rule::RegMrHostAndCuda,
          format("regMr(%p, %zu B, NCCL_PTR_CUDA)", data, size));
  mrs_.push_back(Mr{comm, mhandle});
  count("cudaRegistrations");
  return mhandle;
}

void* Ctx::regDmaBuf(void* comm, void* data, size_t size, uint64_t offset, int fd) {
  void* mhandle = nullptr;
  activity(
      format("regMrDmaBuf(%zu B, offset %llu)", size, static_cast<unsigned long long>(offset)));
  CONF_OK(net().regMrDmaBuf(comm, data, size, NCCL_PTR_CUDA, offset, fd, &mhandle),
          Rule::RegMrDmaBuf,
          format("regMrDmaBuf(%p, %zu B, NCCL_PTR_CUDA, offset %llu, fd %d)", data, size,
                 static_cast<unsigned long long>(offset), fd));
  mrs_.push_back(Mr{comm, mhandle});
  count("dmabufRegistrations");
  return mhandle;
}

void Ctx::dereg(void* comm, void* mhandle) {
  CONF_OK(tryDereg(comm, mhandle), Rule::DeregMrReleases, "deregMr()");
}

ncclResult_t Ctx::tryDereg(void* comm, void* mhandle) {
  for (auto it = mrs_.begin(); it != mrs_.end(); ++it) {
    if (it->comm == comm && it->mhandle == mhandle) {
      mrs_.erase(it);
      break;
    }
  }
  activity("deregMr()");
  return net().deregMr(comm, mhandle);
}

void* Ctx::isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                 const std::string& what) {
  activity("isend(" + what + ")");
  double limit = nowSeconds() + waitLimit_;
  for (int attempt = 1;; attempt++) {
    void* request = nullptr;
    CONF_OK(net().isend(sendComm, data, size, tag, mhandle, phandle_, &request),
            Rule::NullRequestRetry, "isend(" + what + ")");
    if (request != nullptr) return request;
    CONF_EXPECT(nowSeconds() < limit, Rule::InFlightLimits,
                "isend(%s) kept returning a NULL request for %.1f s", what.c_str(), waitLimit_);
    sched_yield();
  }
}

void* Ctx::isendOnce(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                     const std::string& what) {
  activity("isend(" + what + "), once");
  void* request = nullptr;
  CONF_OK(net().isend(sendComm, data, size, tag, mhandle, phandle_, &request),
          Rule::NullRequestRetry, "isend(" + what + ")");
  return request;
}

void* Ctx::irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                 const std::string& what) {
  activity("irecv(" + what + ")");
  double limit = nowSeconds() + waitLimit_;
  void* phandles[kMaxGroupedBuffers];
  for (void*& p : phandles) p = phandle_;
  for (int attempt = 1;; attempt++) {
    void* request = nullptr;
    CONF_OK(net().irecv(recvComm, n, data, sizes, tags, mhandles,
                        n <= kMaxGroupedBuffers ? phandles : nullptr, &request),
            Rule::NullRequestRetry, "irecv(" + what + ")");
    if (request != nullptr) return request;
    CONF_EXPECT(nowSeconds() < limit, Rule::InFlightLimits,
                "irecv(%s) kept returning a NULL request for %.1f s", what.c_str(), waitLimit_);
    sched_yield();
  }
}

ncclResult_t Ctx::wait(void* request, int* sizes, const std::string& what, Rule rule,
                       double limit) {
  activity("test(" + what + ") until done");
  double end = nowSeconds() + (limit > 0 ? limit : waitLimit_);
  for (uint64_t polls = 1;; polls++) {
    int done = 0;
    ncclResult_t res = net().test(request, &done, sizes);
    if (res != ncclSuccess || done) return res;
    if (polls % 64 == 0) {
      CONF_EXPECT(nowSeconds() < end, rule, "test(%s) still not done after %.1f s (%llu polls)",
                  what.c_str(), limit > 0 ? limit : waitLimit_,
                  static_cast<unsigned long long>(polls));
      sched_yield();
    }
  }
}

void Ctx::transfer(void* comm, int src, int dst, size_t size, uint64_t seed, int tag) {
  void* sendComm = comm;
  void* recvComm = comm;
  std::string what = format("%zu B, tag %d, from rank %d to rank %d", size, tag, src, dst);
  if (rank() == src) {
    Buffer buffer(size);
    buffer.fill(seed);
    void* mh = reg(sendComm, buffer.data(), size);
    void* request = isend(sendComm, buffer.data(), size, tag, mh, what);
    int sent = -1;
    CONF_OK(wait(request, &sent, "isend " + what), Rule::CompletionReportsSizes,
            "test(isend " + what + ")");
    dereg(sendComm, mh);
  } else if (rank() == dst) {
    Buffer buffer(size);
    buffer.clear(0);
    void* mh = reg(recvComm, buffer.data(), size);
    void* data = buffer.data();
    size_t capacity = size;
    void* request = irecv(recvComm, 1, &data, &capacity, &tag, &mh, what);
    int received = -1;
    CONF_OK(wait(request, &received, "irecv " + what), Rule::CompletionReportsSizes,
            "test(irecv " + what + ")");
    CONF_EXPECT(received == static_cast<int>(std::min<size_t>(size, INT32_MAX)),
                Rule::CompletionReportsSizes, "the receive of %s completed with sizes[0] = %d",
                what.c_str(), received);
    size_t bad = buffer.verify(seed, 0, size);
    CONF_EXPECT(bad == Buffer::kMismatch, Rule::CompletionReportsSizes,
                "byte %zu of the %s message is wrong", bad, what.c_str());
    long where = 0;
    CONF_EXPECT(buffer.guardsIntact(&where), Rule::TruncationIsAnError,
                "the plugin wrote at offset %ld outside the %zu B receive buffer", where, size);
    dereg(recvComm, mh);
  }
}

}  // namespace conformance
