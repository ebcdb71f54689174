// SPDX-License-Identifier: Apache-2.0
// conf-rma: an ncclRmaPlugin_v14 that forwards to a correct RMA table (the
// library named by CONF_RMA_INNER, sdk-socket's in the suite's tests) and
// plants one defect, chosen by CONF_RMA_DEFECT, where a vendor's plugin
// goes wrong. Each defect breaks one rule of the Rma area (40, 70-79); the
// suite's tests expect that rule to fail (conformance/tests/CMakeLists.txt).
// The library's net table is conf-tcp's, so the suite can load it.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ncclnet/abi/rma.h"

namespace {

enum class Defect {
  None,
  NotGinProxy,             // 70: devices report netDeviceType HOST
  OneCollComm,             // 71: a second live collComm cannot connect
  ShiftsSmallPuts,         // 72: puts of 1..8 bytes land one byte late
  IncAddsValue,            // 73: INC adds signalValue instead of 1
  SignalBeforePut,         // 74: a large put goes out after the signal that follows it
  GetLandsNothing,         // 75: iget reports done and reads nothing
  NullRequestPast16,       // 76: the 17th outstanding request is success and NULL
  DoneBeforeCopy,          // 77: a put is done at once; its bytes are read later
  HidesPeerDeath,          // 78: a failed call or request reads as still pending
  FinalizeBreaksReinit,    // 79: finalize stops what a later init's listen needs
  CompletesOnFirstThread,  // 40: only the first thread that tests sees completions
  AssumesSymmetricSizes,   // 72: puts bounded by the caller's own size of the window
};

struct DefectName {
  const char* name;
  Defect defect;
};
constexpr DefectName kDefects[] = {
    {"not-gin-proxy", Defect::NotGinProxy},
    {"one-collcomm", Defect::OneCollComm},
    {"shifts-small-puts", Defect::ShiftsSmallPuts},
    {"inc-adds-value", Defect::IncAddsValue},
    {"signal-before-put", Defect::SignalBeforePut},
    {"get-lands-nothing", Defect::GetLandsNothing},
    {"null-request-past-16", Defect::NullRequestPast16},
    {"done-before-copy", Defect::DoneBeforeCopy},
    {"hides-peer-death", Defect::HidesPeerDeath},
    {"finalize-breaks-reinit", Defect::FinalizeBreaksReinit},
    {"completes-on-first-thread", Defect::CompletesOnFirstThread},
    {"assumes-symmetric-sizes", Defect::AssumesSymmetricSizes},
};

// A request this table hands out: an inner one, or a put held back.
struct Request {
  void* inner = nullptr;
  bool doneAtOnce = false;  // GetLandsNothing, DoneBeforeCopy
  bool held = false;        // posted to the inner table later
  bool lost = false;        // HidesPeerDeath: failed, reported as pending
  double releaseAt = 0;     // when a held put is posted (0: not yet known)
  void* rmaCtx = nullptr;
  int context = 0;
  uint64_t srcOff = 0, dstOff = 0;
  void *srcMh = nullptr, *dstMh = nullptr;
  size_t size = 0;
  uint32_t rank = 0;
};

// What the C ABI forces: the inner table, the defect, and the requests in
// flight, shared by every call.
struct State {
  std::mutex mutex;
  const ncclRma_v14_t* inner = nullptr;
  void* library = nullptr;
  Defect defect = Defect::None;
  int liveCollComms = 0;
  int outstanding = 0;
  std::vector<Request*> held;  // puts not yet posted to the inner table
  std::vector<void*> orphans;  // inner requests whose outer one is done
  void* collComm = nullptr;    // for testing orphans
  bool finalized = false;      // FinalizeBreaksReinit
  bool testerKnown = false;    // CompletesOnFirstThread
  std::thread::id tester;
  std::map<void*, size_t> regionSizes;  // AssumesSymmetricSizes: local sizes
};
State state;

ncclResult_t say(const char* what) {
  std::fprintf(stderr, "conf-rma: %s\n", what);
  return ncclInvalidUsage;
}

ncclResult_t load() {
  if (state.inner != nullptr) return ncclSuccess;
  const char* defect = std::getenv("CONF_RMA_DEFECT");
  if (defect != nullptr && defect[0] != '\0') {
    bool known = false;
    for (const DefectName& d : kDefects) {
      if (std::strcmp(d.name, defect) == 0) {
        state.defect = d.defect;
        known = true;
      }
    }
    if (!known) return say("unknown CONF_RMA_DEFECT");
  }
  const char* path = std::getenv("CONF_RMA_INNER");
  if (path == nullptr) return say("CONF_RMA_INNER names no library with ncclRmaPlugin_v14");
  state.library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (state.library == nullptr) return say(dlerror());
  state.inner = static_cast<const ncclRma_v14_t*>(dlsym(state.library, "ncclRmaPlugin_v14"));
  if (state.inner == nullptr) return say("CONF_RMA_INNER has no ncclRmaPlugin_v14");
  return ncclSuccess;
}

const ncclRma_v14_t& in() {
  return *state.inner;
}

ncclResult_t postHeld(Request* r) {
  r->held = false;
  return in().iput(r->rmaCtx, r->context, r->srcOff, r->srcMh, r->size, r->dstOff, r->dstMh,
                   r->rank, &r->inner);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A signal was posted: the puts held back go out after it, DoneBeforeCopy's
// at once (their sources are reused by now), SignalBeforePut's half a
// second later, so the receiver sees the signal long before the payload.
void scheduleHeld() {
  double delay = state.defect == Defect::SignalBeforePut ? 0.5 : 0;
  for (Request* r : state.held) {
    if (r->releaseAt == 0) r->releaseAt = now() + delay;
  }
}

// Posts the held puts whose time has come.
ncclResult_t releaseDue() {
  double t = now();
  for (size_t i = 0; i < state.held.size();) {
    Request* r = state.held[i];
    if (r->releaseAt == 0 || r->releaseAt > t) {
      i++;
      continue;
    }
    state.held[i] = state.held.back();
    state.held.pop_back();
    ncclResult_t res = postHeld(r);
    if (res != ncclSuccess) return res;
    if (r->doneAtOnce) {
      state.orphans.push_back(r->inner);
      delete r;
    }
  }
  return ncclSuccess;
}

ncclResult_t init(void** ctx, uint64_t commId, ncclDebugLogger_t log) {
  std::lock_guard<std::mutex> lock(state.mutex);
  if (ncclResult_t res = load(); res != ncclSuccess) return res;
  return in().init(ctx, commId, log);
}
ncclResult_t devices(int* ndev) {
  return in().devices(ndev);
}
ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclResult_t res = in().getProperties(dev, props);
  if (state.defect == Defect::NotGinProxy) props->netDeviceType = NCCL_NET_DEVICE_HOST;
  return res;
}
ncclResult_t listen(void* ctx, int dev, void* handle, void** listenComm) {
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.defect == Defect::FinalizeBreaksReinit && state.finalized) {
      std::fprintf(stderr, "conf-rma: listen after a finalize: the engine is gone\n");
      return ncclSystemError;
    }
  }
  return in().listen(ctx, dev, handle, listenComm);
}
ncclResult_t connect(void* ctx, void* handles[], int nranks, int rank, void* listenComm,
                     void** collComm) {
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.defect == Defect::OneCollComm && state.liveCollComms > 0) return ncclSystemError;
  }
  ncclResult_t res = in().connect(ctx, handles, nranks, rank, listenComm, collComm);
  std::lock_guard<std::mutex> lock(state.mutex);
  if (res == ncclSuccess) {
    state.liveCollComms++;
    state.collComm = *collComm;
  }
  return res;
}
ncclResult_t createContext(void* collComm, ncclRmaConfig_v14_t* config, void** rmaCtx) {
  return in().createContext(collComm, config, rmaCtx);
}
ncclResult_t regMrSym(void* collComm, void* data, size_t size, int type, uint64_t flags,
                      void** mhandle) {
  ncclResult_t res = in().regMrSym(collComm, data, size, type, flags, mhandle);
  std::lock_guard<std::mutex> lock(state.mutex);
  if (res == ncclSuccess) state.regionSizes[*mhandle] = size;
  return res;
}
ncclResult_t regMrSymDmaBuf(void* collComm, void* data, size_t size, int type, uint64_t offset,
                            int fd, uint64_t flags, void** mhandle) {
  if (in().regMrSymDmaBuf == nullptr) return ncclInternalError;
  return in().regMrSymDmaBuf(collComm, data, size, type, offset, fd, flags, mhandle);
}
ncclResult_t deregMrSym(void* collComm, void* mhandle) {
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.regionSizes.erase(mhandle);
  }
  return in().deregMrSym(collComm, mhandle);
}
ncclResult_t destroyContext(void* rmaCtx) {
  return in().destroyContext(rmaCtx);
}
ncclResult_t closeColl(void* collComm) {
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.liveCollComms--;
    // Inner requests of a put already reported done: finish them first.
    for (void* orphan : state.orphans) {
      int done = 0;
      for (int i = 0; i < 1000000 && !done; i++) {
        if (in().test(collComm, orphan, &done) != ncclSuccess) break;
      }
    }
    state.orphans.clear();
  }
  return in().closeColl(collComm);
}
ncclResult_t closeListen(void* listenComm) {
  return in().closeListen(listenComm);
}

// Hands `r` out, or (NullRequestPast16) NULL with success once 16 are out.
ncclResult_t handOut(Request* r, void** request) {
  if (state.defect == Defect::NullRequestPast16 && state.outstanding >= 16) {
    *request = nullptr;
    delete r;
    return ncclSuccess;
  }
  state.outstanding++;
  *request = r;
  return ncclSuccess;
}

// AssumesSymmetricSizes: the target's window checked against this rank's
// own registration of it, as if every rank's were the same size.
bool outsideLocalSize(uint64_t dstOff, size_t size, void* dstMh) {
  if (state.defect != Defect::AssumesSymmetricSizes || dstMh == nullptr) return false;
  auto it = state.regionSizes.find(dstMh);
  return it != state.regionSizes.end() && dstOff + size > it->second;
}

// HidesPeerDeath: a failed post becomes a request that never completes.
ncclResult_t hideFailure(Request* r, void** request) {
  r->lost = true;
  return handOut(r, request);
}

ncclResult_t iput(void* rmaCtx, int context, uint64_t srcOff, void* srcMh, size_t size,
                  uint64_t dstOff, void* dstMh, uint32_t rank, void** request) {
  std::lock_guard<std::mutex> lock(state.mutex);
  if (outsideLocalSize(dstOff, size, dstMh)) {
    std::fprintf(stderr, "conf-rma: iput past the end of the window\n");
    return ncclInvalidArgument;
  }
  if (state.defect == Defect::ShiftsSmallPuts && size >= 1 && size <= 8) dstOff += 1;
  auto* r = new Request{};
  r->rmaCtx = rmaCtx;
  r->context = context;
  r->srcOff = srcOff;
  r->dstOff = dstOff;
  r->srcMh = srcMh;
  r->dstMh = dstMh;
  r->size = size;
  r->rank = rank;
  bool hold = (state.defect == Defect::SignalBeforePut && size >= 65536) ||
              state.defect == Defect::DoneBeforeCopy;
  if (hold) {
    r->held = true;
    r->doneAtOnce = state.defect == Defect::DoneBeforeCopy;
    state.held.push_back(r);
    return handOut(r, request);
  }
  if (state.defect == Defect::NullRequestPast16 && state.outstanding >= 16) {
    return handOut(r, request);
  }
  ncclResult_t res =
      in().iput(rmaCtx, context, srcOff, srcMh, size, dstOff, dstMh, rank, &r->inner);
  if (res != ncclSuccess && state.defect == Defect::HidesPeerDeath) return hideFailure(r, request);
  if (res != ncclSuccess) {
    delete r;
    return res;
  }
  return handOut(r, request);
}

ncclResult_t iputSignal(void* rmaCtx, int context, uint64_t srcOff, void* srcMh, size_t size,
                        uint64_t dstOff, void* dstMh, uint32_t rank, uint64_t signalOff,
                        void* signalMh, uint64_t value, uint32_t op, bool strong, void** request) {
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.defect == Defect::IncAddsValue && op == NCCL_GIN_SIGNAL_OP_INC) {
    op = NCCL_GIN_SIGNAL_OP_ADD;
  }
  if (state.defect == Defect::ShiftsSmallPuts && size >= 1 && size <= 8) dstOff += 1;
  if (outsideLocalSize(dstOff, size, dstMh)) {
    std::fprintf(stderr, "conf-rma: iputSignal past the end of the window\n");
    return ncclInvalidArgument;
  }
  auto* r = new Request{};
  ncclResult_t res = in().iputSignal(rmaCtx, context, srcOff, srcMh, size, dstOff, dstMh, rank,
                                     signalOff, signalMh, value, op, strong, &r->inner);
  if (res != ncclSuccess && state.defect == Defect::HidesPeerDeath) return hideFailure(r, request);
  if (res != ncclSuccess) {
    delete r;
    return res;
  }
  scheduleHeld();
  if (ncclResult_t held = releaseDue(); held != ncclSuccess) return held;
  return handOut(r, request);
}

ncclResult_t iget(void* rmaCtx, int context, uint64_t remoteOff, void* remoteMh, size_t size,
                  uint64_t localOff, void* localMh, uint32_t rank, void** request) {
  std::lock_guard<std::mutex> lock(state.mutex);
  auto* r = new Request{};
  if (state.defect == Defect::GetLandsNothing) {
    r->doneAtOnce = true;
    return handOut(r, request);
  }
  ncclResult_t res =
      in().iget(rmaCtx, context, remoteOff, remoteMh, size, localOff, localMh, rank, &r->inner);
  if (res != ncclSuccess) {
    delete r;
    return res;
  }
  return handOut(r, request);
}

ncclResult_t iflush(void* rmaCtx, int context, void* mhandle, uint32_t rank, void** request) {
  std::lock_guard<std::mutex> lock(state.mutex);
  void* inner = nullptr;
  ncclResult_t res = in().iflush(rmaCtx, context, mhandle, rank, &inner);
  *request = nullptr;
  if (res != ncclSuccess || inner == nullptr) return res;
  auto* r = new Request{};
  r->inner = inner;
  state.outstanding++;
  *request = r;
  return ncclSuccess;
}

ncclResult_t test(void* collComm, void* request, int* done) {
  std::lock_guard<std::mutex> lock(state.mutex);
  auto* r = static_cast<Request*>(request);
  *done = 0;
  if (r->lost) return ncclSuccess;
  if (state.defect == Defect::CompletesOnFirstThread) {
    if (!state.testerKnown) {
      state.testerKnown = true;
      state.tester = std::this_thread::get_id();
    }
    if (state.tester != std::this_thread::get_id()) return ncclSuccess;
  }
  if (r->doneAtOnce) {
    *done = 1;
    state.outstanding--;
    if (!r->held) delete r;  // a held one is deleted once posted
    return ncclSuccess;
  }
  if (ncclResult_t held = releaseDue(); held != ncclSuccess) return held;
  // Inner requests nobody waits for any more still need their tests.
  for (size_t i = 0; i < state.orphans.size();) {
    int orphanDone = 0;
    ncclResult_t res = in().test(collComm, state.orphans[i], &orphanDone);
    if (res != ncclSuccess) return res;
    if (orphanDone) {
      state.orphans[i] = state.orphans.back();
      state.orphans.pop_back();
    } else {
      i++;
    }
  }
  if (r->held) return ncclSuccess;  // waits until the signal after it has gone out
  ncclResult_t res = in().test(collComm, r->inner, done);
  if (res != ncclSuccess && state.defect == Defect::HidesPeerDeath) {
    r->lost = true;
    *done = 0;
    return ncclSuccess;
  }
  if (res == ncclSuccess && *done) {
    state.outstanding--;
    delete r;
  }
  return res;
}

ncclResult_t progress(void* rmaCtx) {
  ncclResult_t res = in().rmaProgress ? in().rmaProgress(rmaCtx) : ncclSuccess;
  return state.defect == Defect::HidesPeerDeath ? ncclSuccess : res;
}
ncclResult_t queryLastError(void* rmaCtx, bool* hasError) {
  if (in().queryLastError == nullptr) {
    *hasError = false;
    return ncclSuccess;
  }
  return in().queryLastError(rmaCtx, hasError);
}
ncclResult_t finalize(void* ctx) {
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.finalized = true;
  }
  return in().finalize(ctx);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const ncclRma_v14_t ncclRmaPlugin_v14 = {
    "conf-rma",    init,           devices,        getProperties, listen,         connect,
    createContext, regMrSym,       regMrSymDmaBuf, deregMrSym,    destroyContext, closeColl,
    closeListen,   iput,           iputSignal,     iget,          iflush,         test,
    progress,      queryLastError, finalize};
