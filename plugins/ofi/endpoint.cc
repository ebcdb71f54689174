// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: a device's endpoint and its progress loop (see endpoint.hpp).
#include "endpoint.hpp"
#include "probe_inbox.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>
#include <cstring>

#include <rdma/fi_cm.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

namespace ncclnet::ofi {
namespace {

#define OFI_CHECK(call, what)                                                      \
  do {                                                                             \
    int rc_ = static_cast<int>(call);                                              \
    if (rc_ != 0) {                                                                \
      NCCLNET_WARN(log, "%s on %s/%s failed: %s (%d)", what, nic.provider.c_str(), \
                   nic.name.c_str(), fiError(rc_).c_str(), rc_);                   \
      return resultFor(rc_);                                                       \
    }                                                                              \
  } while (0)

}  // namespace

Endpoint::Endpoint(const Nic& nic, const Config& config, const Logger& log)
    : nic_(nic), config_(config), log_(log), batch_(config.cqReadCount) {}

Endpoint::~Endpoint() {
  stopWatchdog();
  // The endpoint goes next: once it is closed no completion can arrive, so
  // retired objects and the buffers their contexts name may be freed (comms
  // before the peers they name, peers before the registrations they hold).
  ep_.reset();
  retired_.clear();
  inbox_.reset();
  peers_.clear();
  hostCache_.reset();
  cudaCache_.reset();
  av_.reset();
  cq_.reset();
  domain_.reset();
  fabric_.reset();
}

ncclResult_t Endpoint::open(const Nic& nic, const Config& config, const Logger& log,
                            std::unique_ptr<Endpoint>* out) {
  std::unique_ptr<Endpoint> self(new Endpoint(nic, config, log));
  const fi_info* info = nic.info.get();
  self->mrMode_ = info->domain_attr->mr_mode;

  fid_fabric* fabric = nullptr;
  OFI_CHECK(fi_fabric(info->fabric_attr, &fabric, nullptr), "fi_fabric");
  self->fabric_.reset(fabric);
  fid_domain* domain = nullptr;
  OFI_CHECK(fi_domain(fabric, const_cast<fi_info*>(info), &domain, nullptr), "fi_domain");
  self->domain_.reset(domain);

  fi_cq_attr cqAttr{};
  cqAttr.format = FI_CQ_FORMAT_TAGGED;
  cqAttr.wait_obj = FI_WAIT_NONE;  // polled from test(): no wait object needed
  cqAttr.size = 0;                 // the provider's default, sized for its queues
  fid_cq* cq = nullptr;
  OFI_CHECK(fi_cq_open(domain, &cqAttr, &cq, nullptr), "fi_cq_open");
  self->cq_.reset(cq);

  fi_av_attr avAttr{};
  avAttr.type =
      info->domain_attr->av_type != FI_AV_UNSPEC ? info->domain_attr->av_type : FI_AV_TABLE;
  fid_av* av = nullptr;
  OFI_CHECK(fi_av_open(domain, &avAttr, &av, nullptr), "fi_av_open");
  self->av_.reset(av);

  fid_ep* ep = nullptr;
  OFI_CHECK(fi_endpoint(domain, const_cast<fi_info*>(info), &ep, nullptr), "fi_endpoint");
  self->ep_.reset(ep);
  OFI_CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
  OFI_CHECK(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind(av)");
  OFI_CHECK(fi_enable(ep), "fi_enable");

  size_t length = kMaxAddress;
  self->address_.resize(kMaxAddress);
  int rc = fi_getname(&ep->fid, self->address_.data(), &length);
  if (rc == -FI_ETOOSMALL) {
    NCCLNET_WARN(log, "%s/%s: endpoint address is %zu bytes, more than the %zu a handle holds",
                 nic.provider.c_str(), nic.name.c_str(), length, kMaxAddress);
    return ncclSystemError;
  }
  OFI_CHECK(rc, "fi_getname");
  self->address_.resize(length);

  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto dereg = [](void* handle) { fi_close(&static_cast<fid_mr*>(handle)->fid); };
  self->hostCache_ = std::make_unique<MrCache>(page, config.mrCache, dereg);
  self->cudaCache_ = std::make_unique<MrCache>(page, config.mrCache, dereg);
  ncclResult_t res = self->startWatchdog();
  if (res != ncclSuccess) return res;
  NCCLNET_INFO(log, NCCL_INIT | NCCL_NET, "endpoint open on %s/%s (%zu-byte address, mr_mode 0x%x)",
               nic.provider.c_str(), nic.name.c_str(), length, self->mrMode_);
  *out = std::move(self);
  return ncclSuccess;
}

ncclResult_t Endpoint::resolve(const void* name, size_t length, Remote** out) {
  std::vector<uint8_t> key(static_cast<const uint8_t*>(name),
                           static_cast<const uint8_t*>(name) + length);
  auto it = peers_.find(key);
  if (it != peers_.end()) {
    *out = it->second.get();
    return ncclSuccess;
  }
  // An address the provider cannot use must not reach fi_av_insert: after
  // one failed insert, rxm's AV in libfabric 1.17 fails every later insert
  // with -FI_EINVAL until the endpoint closes.
  if (!plausibleAddress(name, length)) {
    NCCLNET_WARN(log_, "peer address (%zu bytes) is not a usable %s address for %s", length,
                 fi_tostr(&nic_.info->addr_format, FI_TYPE_ADDR_FORMAT), nic_.provider.c_str());
    return ncclInvalidUsage;
  }
  fi_addr_t addr = FI_ADDR_NOTAVAIL;
  int inserted = fi_av_insert(av_.get(), name, 1, &addr, 0, nullptr);
  if (inserted != 1) {
    NCCLNET_WARN(log_, "fi_av_insert of a %zu-byte peer address failed: %s", length,
                 inserted < 0 ? fiError(inserted).c_str() : "address not inserted");
    return ncclSystemError;
  }
  char text[128] = "";
  size_t textLength = sizeof(text);
  fi_av_straddr(av_.get(), name, text, &textLength);
  auto remote = std::make_unique<Remote>(this, addr, ++lastRemoteId_, text, key == address_);
  *out = remote.get();
  peers_.emplace(std::move(key), std::move(remote));
  return ncclSuccess;
}

bool Endpoint::plausibleAddress(const void* name, size_t length) const {
  uint32_t format = nic_.info->addr_format;
  bool in4 = format == FI_SOCKADDR_IN || format == FI_SOCKADDR;
  bool in6 = format == FI_SOCKADDR_IN6 || format == FI_SOCKADDR;
  if (!in4 && !in6) return length > 0;  // a format we cannot check
  if (length < sizeof(sa_family_t)) return false;
  sa_family_t family;
  std::memcpy(&family, name, sizeof(family));
  if (in4 && family == AF_INET && length == sizeof(sockaddr_in)) {
    sockaddr_in in;
    std::memcpy(&in, name, sizeof(in));
    return in.sin_port != 0 && in.sin_addr.s_addr != htonl(INADDR_ANY);
  }
  if (in6 && family == AF_INET6 && length == sizeof(sockaddr_in6)) {
    sockaddr_in6 in6;
    std::memcpy(&in6, name, sizeof(in6));
    return in6.sin6_port != 0 && !IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr);
  }
  return false;
}

bool Endpoint::allocConnId(uint32_t* id) {
  uint64_t count = nic_.tags.connIdCount();
  if (connIds_.size() >= count) return false;
  // Round robin, so that a closed connection's id rests as long as possible
  // before a new connection takes it.
  for (uint64_t i = 0; i < count; i++) {
    lastConnId_ = static_cast<uint32_t>((lastConnId_ + 1) % count);
    if (connIds_.insert(lastConnId_).second) {
      *id = lastConnId_;
      return true;
    }
  }
  return false;
}

ssize_t Endpoint::send(const void* buf, size_t len, void* desc, fi_addr_t dest, uint64_t tag,
                       OpContext* op) {
  return fi_tsend(ep_.get(), buf, len, desc, dest, tag, op);
}

ssize_t Endpoint::recv(void* buf, size_t len, void* desc, fi_addr_t src, uint64_t tag,
                       OpContext* op) {
  return fi_trecv(ep_.get(), buf, len, desc, src, tag, 0, op);
}

ssize_t Endpoint::readSelf(void* buf, size_t len, void* desc, const void* remote, void* mhandle,
                           OpContext* op) {
  if (self_ == nullptr) {
    if (resolve(address_.data(), address_.size(), &self_) != ncclSuccess) return -FI_EINVAL;
  }
  auto* entry = static_cast<MrCache::Entry*>(mhandle);
  auto* mr = static_cast<fid_mr*>(entry->handle);
  // Without FI_MR_VIRT_ADDR the target address is an offset into the region.
  uint64_t addr = reinterpret_cast<uintptr_t>(remote);
  if (!(mrMode_ & FI_MR_VIRT_ADDR)) addr -= entry->begin;
  return fi_read(ep_.get(), buf, len, desc, self_->addr(), addr, fi_mr_key(mr), op);
}

ncclResult_t Endpoint::progress() {
  // A bounded number of batches: test() must return even when completions
  // keep arriving.
  for (int round = 0; round < 8; round++) {
    ssize_t n = fi_cq_read(cq_.get(), batch_.data(), batch_.size());
    if (n > 0) {
      completions_ += static_cast<uint64_t>(n);
      for (ssize_t i = 0; i < n; i++) {
        auto* op = static_cast<OpContext*>(batch_[i].op_context);
        op->sink->onCompletion(op->index, batch_[i]);
      }
      if (static_cast<size_t>(n) < batch_.size()) break;
      continue;
    }
    if (n == -FI_EAGAIN) break;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      ssize_t got = fi_cq_readerr(cq_.get(), &err, 0);
      if (got != 1) continue;  // taken by nobody else (we hold the lock); retry the read
      char provText[256] = "";
      const char* prov =
          fi_cq_strerror(cq_.get(), err.prov_errno, err.err_data, provText, sizeof(provText));
      std::string text = fiError(err.err) + " (provider: " + (prov ? prov : "") + ")";
      auto* op = static_cast<OpContext*>(err.op_context);
      if (op != nullptr) {
        op->sink->onError(op->index, err, text);
      } else {
        NCCLNET_WARN(log_, "completion error without a context on %s: %s", nic_.name.c_str(),
                     text.c_str());
      }
      continue;
    }
    NCCLNET_WARN(log_, "fi_cq_read on %s failed: %s (%zd)", nic_.name.c_str(),
                 fiError(static_cast<int>(n)).c_str(), n);
    return resultFor(static_cast<int>(n));
  }
  serviceIfDue(Clock::now());
  if (!retired_.empty()) {
    retired_.erase(std::remove_if(retired_.begin(), retired_.end(),
                                  [](const std::unique_ptr<Retirable>& object) {
                                    return object->quiescent();
                                  }),
                   retired_.end());
  }
  return ncclSuccess;
}

void Endpoint::retire(std::unique_ptr<Retirable> object) {
  if (!object->quiescent()) retired_.push_back(std::move(object));
}

MrCache::RegisterFn Endpoint::pagesOf(int type) {
  return [this, type](uintptr_t* begin, uintptr_t* end, void** handle) {
    return registerPages(reinterpret_cast<void*>(*begin), *end - *begin, type, nullptr, handle);
  };
}

int Endpoint::registerPages(void* base, size_t length, int type, const DmaBufRegion* dmabuf,
                            void** handle) {
  iovec iov{base, length};
  fi_mr_attr attr{};
  attr.mr_iov = &iov;
  attr.iov_count = 1;
  attr.access = FI_SEND | FI_RECV;
  if (nic_.hmem) attr.access |= FI_READ | FI_REMOTE_READ;  // the flush read
  attr.requested_key = nextMrKey_++;                       // must be unique without FI_MR_PROV_KEY
  attr.iface = type == NCCL_PTR_CUDA ? FI_HMEM_CUDA : FI_HMEM_SYSTEM;
  fid_mr* mr = nullptr;
  int rc = dmabuf != nullptr ? registerDmaBuf(domain_.get(), attr, *dmabuf, &mr)
                             : fi_mr_regattr(domain_.get(), &attr, 0, &mr);
  if (rc != 0) {
    NCCLNET_WARN(log_, "fi_mr_regattr of %zu bytes at %p (%s) on %s failed: %s (%d)", length, base,
                 dmabuf != nullptr       ? "dma-buf"
                 : type == NCCL_PTR_CUDA ? "GPU memory"
                                         : "host memory",
                 nic_.name.c_str(), fiError(rc).c_str(), rc);
    return rc;
  }
  MrPtr owned(mr);
  if (mrMode_ & FI_MR_ENDPOINT) {
    // The registration belongs to one endpoint; the device has only one.
    rc = fi_mr_bind(mr, &ep_->fid, 0);
    if (rc == 0) rc = fi_mr_enable(mr);
    if (rc != 0) {
      NCCLNET_WARN(log_, "binding a registration to the endpoint on %s failed: %s",
                   nic_.name.c_str(), fiError(rc).c_str());
      return rc;
    }
  }
  *handle = owned.release();
  return 0;
}

ncclResult_t Endpoint::regMr(void* data, size_t size, int type, void** mhandle) {
  if (type == NCCL_PTR_CUDA && !nic_.hmem) {
    NCCLNET_WARN(log_, "regMr: GPU memory on %s, which has no usable FI_HMEM support",
                 nic_.name.c_str());
    return resultOf(Failure::kUnsupportedMemory);  // ptrSupport did not offer it
  }
  if (type != NCCL_PTR_HOST && type != NCCL_PTR_CUDA) {
    NCCLNET_WARN(log_, "regMr: memory type %d is neither NCCL_PTR_HOST nor NCCL_PTR_CUDA", type);
    return resultOf(Failure::kUnsupportedMemory);
  }
  MrCache::Entry* entry = nullptr;
  int rc = cacheFor(type).acquire(data, size, pagesOf(type), &entry);
  if (rc != 0) return resultFor(rc);
  *mhandle = entry;
  return ncclSuccess;
}

ncclResult_t Endpoint::regMrDmaBuf(void* data, size_t size, uint64_t offset, int fd,
                                   void** mhandle) {
  // GPU memory either way: a registration of the same pages by address may
  // serve this request, and this one may serve a later regMr of them.
  auto viaFd = [&](uintptr_t* begin, uintptr_t* end, void** handle) {
    auto* base = reinterpret_cast<void*>(*begin);
    size_t length = *end - *begin;
    // The cache registers whole pages: the dma-buf range starts as many
    // bytes before `offset` as the first page starts before `data`.
    auto lead = static_cast<uint64_t>(static_cast<char*>(data) - static_cast<char*>(base));
    if (offset < lead) {
      NCCLNET_WARN(log_,
                   "regMrDmaBuf: %p lies %llu bytes into its page but only %llu bytes into the "
                   "dma-buf; the dma-buf must start on a page boundary",
                   data, static_cast<unsigned long long>(lead),
                   static_cast<unsigned long long>(offset));
      return -FI_EINVAL;
    }
    DmaBufRegion region{fd, offset - lead, base, length};
    return registerPages(base, length, NCCL_PTR_CUDA, &region, handle);
  };
  MrCache::Entry* entry = nullptr;
  int rc = cudaCache_->acquire(data, size, viaFd, &entry);
  if (rc != 0) return resultFor(rc);
  *mhandle = entry;
  return ncclSuccess;
}

ncclResult_t Endpoint::deregMr(void* mhandle) {
  if (hostCache_->release(mhandle) || cudaCache_->release(mhandle)) return ncclSuccess;
  NCCLNET_WARN(log_, "deregMr: %p is not a live registration on %s", mhandle, nic_.name.c_str());
  return ncclInvalidArgument;
}

bool Endpoint::descriptorFor(void* mhandle, const void* data, size_t size, void** desc) {
  *desc = nullptr;
  if (mhandle == nullptr) return !needsLocalMr();
  auto* entry = static_cast<MrCache::Entry*>(mhandle);
  if (size > 0 && !MrCache::covers(*entry, data, size)) return false;
  *desc = fi_mr_desc(static_cast<fid_mr*>(entry->handle));
  return true;
}

ncclResult_t Endpoint::controlDescriptor(const void* data, size_t size, void** desc,
                                         MrCache::Entry** entry) {
  *desc = nullptr;
  *entry = nullptr;
  if (!needsLocalMr()) return ncclSuccess;
  int rc = hostCache_->acquire(data, size, pagesOf(NCCL_PTR_HOST), entry);
  if (rc != 0) return resultFor(rc);
  *desc = fi_mr_desc(static_cast<fid_mr*>((*entry)->handle));
  return ncclSuccess;
}

void Endpoint::releaseControl(MrCache::Entry* entry) {
  if (entry != nullptr) hostCache_->release(entry);
}

}  // namespace ncclnet::ofi
