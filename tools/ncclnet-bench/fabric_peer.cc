// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: raw libfabric, the number a libfabric plugin is held to.
#include "fabric_peer.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace bench {

namespace {

// Closes any fid on scope exit.
struct FidCloser {
  void operator()(fid* f) const {
    if (f != nullptr) fi_close(f);
  }
};
template <class T>
std::unique_ptr<fid, FidCloser> own(T* object) {
  return std::unique_ptr<fid, FidCloser>(object ? &object->fid : nullptr);
}

class RawFabric final : public Peer {
 public:
  ~RawFabric() override {
    // Endpoint before what it is bound to.
    mr_.reset();
    ep_.reset();
    av_.reset();
    cq_.reset();
    domain_.reset();
    fabric_.reset();
    if (info_ != nullptr) fi_freeinfo(info_);
  }

  bool init(size_t maxSize, int window, Pair& pair, std::string* why) {
    fi_info* hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED;
    hints->mode = FI_CONTEXT;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
    const char* provider = std::getenv("FI_PROVIDER");
    hints->fabric_attr->prov_name = strdup(provider ? provider : "tcp;ofi_rxm");
    int rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &info_);
    fi_freeinfo(hints);
    if (rc != 0) return fail(why, "fi_getinfo", rc);
    fid_fabric* fabric = nullptr;
    fid_domain* domain = nullptr;
    fid_cq* cq = nullptr;
    fid_av* av = nullptr;
    fid_ep* ep = nullptr;
    if ((rc = fi_fabric(info_->fabric_attr, &fabric, nullptr)) != 0) return fail(why, "fi_fabric", rc);
    fabric_ = own(fabric);
    if ((rc = fi_domain(fabric, info_, &domain, nullptr)) != 0) return fail(why, "fi_domain", rc);
    domain_ = own(domain);
    fi_cq_attr cqAttr{};
    cqAttr.format = FI_CQ_FORMAT_TAGGED;
    cqAttr.size = static_cast<size_t>(window) * 4 + 16;
    if ((rc = fi_cq_open(domain, &cqAttr, &cq, nullptr)) != 0) return fail(why, "fi_cq_open", rc);
    cq_ = own(cq);
    fi_av_attr avAttr{};
    avAttr.type = FI_AV_TABLE;
    if ((rc = fi_av_open(domain, &avAttr, &av, nullptr)) != 0) return fail(why, "fi_av_open", rc);
    av_ = own(av);
    if ((rc = fi_endpoint(domain, info_, &ep, nullptr)) != 0) return fail(why, "fi_endpoint", rc);
    ep_ = own(ep);
    if ((rc = fi_ep_bind(ep, &cq->fid, FI_SEND | FI_RECV)) != 0 ||
        (rc = fi_ep_bind(ep, &av->fid, 0)) != 0 || (rc = fi_enable(ep)) != 0) {
      return fail(why, "binding the endpoint", rc);
    }
    ep_ptr_ = ep;
    cq_ptr_ = cq;
    buffer_.assign(std::max<size_t>(maxSize, 1), 1);
    fid_mr* mr = nullptr;
    if ((rc = fi_mr_reg(domain, buffer_.data(), buffer_.size(), FI_SEND | FI_RECV, 0, 0, 0, &mr,
                        nullptr)) != 0) {
      return fail(why, "fi_mr_reg", rc);
    }
    mr_ = own(mr);
    desc_ = fi_mr_desc(mr);
    contexts_.resize(static_cast<size_t>(window) + 1);

    // Exchange endpoint names through the pipe; the parent writes first.
    char name[256];
    size_t nameLen = sizeof(name);
    if ((rc = fi_getname(&ep->fid, name, &nameLen)) != 0) return fail(why, "fi_getname", rc);
    char peerName[256];
    size_t peerLen = 0;
    bool exchanged = pair.isChild()
                         ? pair.recv(&peerLen, sizeof(peerLen)) && pair.recv(peerName, peerLen) &&
                               pair.send(&nameLen, sizeof(nameLen)) && pair.send(name, nameLen)
                         : pair.send(&nameLen, sizeof(nameLen)) && pair.send(name, nameLen) &&
                               pair.recv(&peerLen, sizeof(peerLen)) && pair.recv(peerName, peerLen);
    if (!exchanged || peerLen > sizeof(peerName)) {
      *why = "could not exchange endpoint names";
      return false;
    }
    if (fi_av_insert(av, peerName, 1, &peer_, 0, nullptr) != 1) {
      *why = "fi_av_insert failed";
      return false;
    }
    describe_ = std::string("raw libfabric ") + info_->fabric_attr->prov_name + ", tagged RDM";
    return pair.barrier();
  }

  std::string describe() const override { return describe_; }

  bool stream(bool sender, size_t size, int iters, int window) override {
    int posted = 0, completed = 0;
    while (completed < iters) {
      while (posted < iters && posted - completed < window) {
        if (!post(sender, size)) return false;
        posted++;
      }
      int n = reap();
      if (n < 0) return false;
      completed += n;
    }
    return true;
  }

  bool pingpong(bool initiator, size_t size, int iters) override {
    for (int i = 0; i < iters; i++) {
      for (bool sending : {initiator, !initiator}) {
        if (!post(sending, size)) return false;
        int done = 0;
        while (done == 0) {
          done = reap();
          if (done < 0) return false;
        }
      }
    }
    return true;
  }

 private:
  static bool fail(std::string* why, const char* what, int rc) {
    *why = std::string(what) + ": " + fi_strerror(-rc);
    return false;
  }

  bool post(bool sending, size_t size) {
    fi_context* ctx = &contexts_[next_++ % contexts_.size()];
    for (;;) {
      ssize_t rc = sending ? fi_tsend(ep_ptr_, buffer_.data(), size, desc_, peer_, 7, ctx)
                           : fi_trecv(ep_ptr_, buffer_.data(), size, desc_, peer_, 7, 0, ctx);
      if (rc == 0) return true;
      if (rc != -FI_EAGAIN) return false;
      if (reapInto(&pendingDone_) < 0) return false;  // make progress, keep the count
    }
  }

  // Completions since the last call, including those seen while posting.
  int reap() {
    int done = pendingDone_;
    pendingDone_ = 0;
    if (reapInto(&done) < 0) return -1;
    return done;
  }

  int reapInto(int* done) {
    fi_cq_tagged_entry entries[16];
    ssize_t n = fi_cq_read(cq_ptr_, entries, 16);
    if (n > 0) {
      *done += static_cast<int>(n);
      return 0;
    }
    if (n == -FI_EAGAIN) return 0;
    return -1;
  }

  fi_info* info_ = nullptr;
  std::unique_ptr<fid, FidCloser> fabric_, domain_, cq_, av_, ep_, mr_;
  fid_ep* ep_ptr_ = nullptr;
  fid_cq* cq_ptr_ = nullptr;
  void* desc_ = nullptr;
  fi_addr_t peer_ = FI_ADDR_UNSPEC;
  std::vector<char> buffer_;
  std::vector<fi_context> contexts_;
  size_t next_ = 0;
  int pendingDone_ = 0;
  std::string describe_;
};

}  // namespace

std::unique_ptr<Peer> FabricPeer::open(size_t maxSize, int window, Pair& pair, std::string* why) {
  auto peer = std::make_unique<RawFabric>();
  if (!peer->init(maxSize, window, pair, why)) return nullptr;
  return peer;
}

}  // namespace bench
