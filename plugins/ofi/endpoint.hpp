// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: one endpoint of a device with its own libfabric objects (fabric,
// domain, completion queue, address vector, endpoint), the progress loop
// that turns completions into calls on their owners, and its registration
// caches. A device has NCCLNET_OFI_ENDPOINTS of them, taken in turn by
// listens and connects.
//
// The comms of one endpoint share it: the connection id in each tag
// (tag.hpp) keeps their messages apart. Every call below, except open() and
// the constructor/destructor, requires mutex() held: the provider was asked
// for FI_THREAD_DOMAIN, so the plugin serializes its calls itself.
//
// A watchdog thread per endpoint makes sure that a few times a second the
// peers that comms wait on are pinged (remote.hpp) and the ping inbox is
// posted, by progress() when the application calls in, else by taking the
// mutex and driving progress itself (so pings are answered); it also shuts
// down idle foreign TCP connections (stray.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <rdma/fi_endpoint.h>

#include "config.hpp"
#include "discovery.hpp"
#include "dmabuf.hpp"
#include "fid.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/registration_cache.hpp"
#include "remote.hpp"
#include "stray.hpp"

namespace ncclnet::ofi {

// Registrations by page, shared when NCCLNET_OFI_MR_CACHE is on; an entry is
// the mhandle NCCL holds. The endpoint serializes every call (NoLock).
using MrCache = RegistrationCache<void*, NoLock>;

// An object closed by NCCL while libfabric still held some of its contexts:
// the endpoint keeps it until they have all come back (or the endpoint is
// closed, after which none can).
class Retirable {
 public:
  virtual ~Retirable() = default;
  virtual bool quiescent() const = 0;
};

class Endpoint {
 public:
  static ncclResult_t open(const Nic& nic, const Config& config, const Logger& log,
                           std::unique_ptr<Endpoint>* out);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  std::mutex& mutex() { return mutex_; }
  // Counts a test() that found mutex() taken (any thread; no lock needed).
  unsigned missedLock() { return ++lockMisses_; }
  const Nic& nic() const { return nic_; }
  const TagLayout& tags() const { return nic_.tags; }
  const Logger& log() const { return log_; }
  const Config& config() const { return config_; }
  const std::vector<uint8_t>& address() const { return address_; }

  // ---- peers and ids ---------------------------------------------------------
  // The peer with this endpoint name (inserted into the AV once, then
  // cached). A name that is not a valid address of this provider's format
  // fails here, before libfabric sees it.
  ncclResult_t resolve(const void* name, size_t length, Remote** out);
  bool allocConnId(uint32_t* id);
  void freeConnId(uint32_t id) { connIds_.erase(id); }
  // Never reused while the endpoint lives: a late connect message for a
  // closed listen can never match a new one.
  uint64_t nextListenId() { return ++lastListenId_; }

  // ---- operations: 0, -FI_EAGAIN (try later) or another negative fi_errno --
  ssize_t send(const void* buf, size_t len, void* desc, fi_addr_t dest, uint64_t tag,
               OpContext* op);
  ssize_t recv(void* buf, size_t len, void* desc, fi_addr_t src, uint64_t tag, OpContext* op);
  // An RMA read of this endpoint's own registered memory (the GPU flush).
  ssize_t readSelf(void* buf, size_t len, void* desc, const void* remote, void* mhandle,
                   OpContext* op);
  int cancel(OpContext* op) { return static_cast<int>(fi_cancel(&ep_->fid, op)); }

  // Reads the completion queue, dispatching every completion to its sink,
  // and frees retired objects that became quiescent. An error is returned
  // only when the queue itself fails.
  ncclResult_t progress();
  // Keeps `object` alive until it is quiescent.
  void retire(std::unique_ptr<Retirable> object);

  // ---- memory registration ------------------------------------------------
  // `type` NCCL_PTR_HOST or NCCL_PTR_CUDA (the latter only when nic().hmem).
  ncclResult_t regMr(void* data, size_t size, int type, void** mhandle);
  // GPU memory named by a dma-buf fd (used during the call only); `offset`
  // is where `data` lies in the dma-buf. Only when nic().dmabuf.
  ncclResult_t regMrDmaBuf(void* data, size_t size, uint64_t offset, int fd, void** mhandle);
  ncclResult_t deregMr(void* mhandle);
  // The descriptor for a buffer inside `mhandle` (NULL mhandle: none, which
  // only providers without FI_MR_LOCAL accept). False when the registration
  // does not cover the buffer. `mhandle` is a live entry of this endpoint's
  // caches: the SDK's object model refuses any other before the data path,
  // so it is not looked up again here.
  bool descriptorFor(void* mhandle, const void* data, size_t size, void** desc);
  bool needsLocalMr() const { return (mrMode_ & FI_MR_LOCAL) != 0; }
  bool isGpuRegistration(const void* mhandle) const { return cudaCache_->contains(mhandle); }

  // The descriptor of the endpoint's own control buffers (connect messages).
  ncclResult_t controlDescriptor(const void* data, size_t size, void** desc,
                                 MrCache::Entry** entry);
  void releaseControl(MrCache::Entry* entry);

 private:
  Endpoint(const Nic& nic, const Config& config, const Logger& log);
  // `dmabuf` null: the pages by address; else the same pages through the
  // dma-buf that holds them.
  int registerPages(void* base, size_t length, int type, const DmaBufRegion* dmabuf, void** handle);
  // The cache's register function for `type` by address.
  MrCache::RegisterFn pagesOf(int type);
  MrCache& cacheFor(int type) { return type == NCCL_PTR_CUDA ? *cudaCache_ : *hostCache_; }

  // Pings and their answers (remote.hpp): receives kept posted for them.
  class ProbeInbox;
  // The watchdog thread: started once the endpoint works, stopped first.
  ncclResult_t startWatchdog();
  void stopWatchdog();
  void watchdog();
  // NCCLNET_OFI_PROGRESS_THREAD: progress in a loop until stopWatchdog().
  void progressLoop();
  // Runs the watchdog's duties when a tick passed since they last ran.
  // Requires mutex_ held.
  void serviceIfDue(Clock::time_point now);
  void onProbe(const ProbeMessage& message, size_t length);
  // Whether `name` has the size and family the provider's address format
  // demands (sockaddr formats only; others are left to fi_av_insert).
  bool plausibleAddress(const void* name, size_t length) const;

  std::mutex mutex_;
  const Nic& nic_;
  Config config_;
  Logger log_;
  int mrMode_ = 0;
  uint64_t nextMrKey_ = 1;  // for providers without FI_MR_PROV_KEY

  FabricPtr fabric_;
  DomainPtr domain_;
  CqPtr cq_;
  AvPtr av_;
  EpPtr ep_;
  std::vector<uint8_t> address_;
  std::map<std::vector<uint8_t>, std::unique_ptr<Remote>> peers_;
  uint64_t lastRemoteId_ = 0;
  std::unique_ptr<ProbeInbox> inbox_;
  std::unique_ptr<StraySweeper> strays_;
  std::thread watchdog_;
  std::thread progressThread_;
  std::atomic<bool> progressStop_{false};
  std::atomic<unsigned> lockMisses_{0};
  uint64_t completions_ = 0;  // read by progress(), under mutex_
  // The watchdog sleeps on its own mutex, never on mutex_: a thread woken
  // while the application holds mutex_ in a tight test() loop would wait on
  // it again and again, each time costing the application a wake-up call.
  std::mutex stopMutex_;
  std::condition_variable wake_;  // with stopMutex_: stop the watchdog
  bool stopping_ = false;
  // The watchdog's duties (pings, the ping inbox) run at most once per tick,
  // from whichever call into the endpoint comes first once one is due; the
  // watchdog takes mutex_ itself only when no call did them for a tick.
  Clock::duration tick_{};
  std::atomic<Clock::rep> lastService_{0};  // Clock ticks since its epoch
  std::set<uint32_t> connIds_;
  uint32_t lastConnId_ = 0;
  uint64_t lastListenId_ = 0;
  std::unique_ptr<MrCache> hostCache_;
  std::unique_ptr<MrCache> cudaCache_;
  std::vector<std::unique_ptr<Retirable>> retired_;
  std::vector<fi_cq_tagged_entry> batch_;
  Remote* self_ = nullptr;
};

}  // namespace ncclnet::ofi
