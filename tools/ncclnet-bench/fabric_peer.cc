// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: raw libfabric, the number a libfabric plugin is held to.
//
// Like for like with a plugin run of the same schedule (plugin_peer.cc):
// the fi_getinfo hints and API version sdk-ofi uses, so the provider hands
// both the same attributes (directed receive, threading, MR modes,
// progress); receives directed at the peer; the provider's default CQ size;
// one send buffer and as many receive buffers as the plugin run has
// (main.cc: min(window, 4)), cycled the same way, so both move the same
// bytes through the same caches; the connection set up before the clock
// starts; and in ping-pong, receives posted ahead.
#include "fabric_peer.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ncclnet::bench {

namespace {

// Receives each side keeps posted ahead in ping-pong (plugin_peer.cc).
constexpr int kPrepost = 4;

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
    mrs_.clear();
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
    hints->caps = FI_TAGGED | FI_DIRECTED_RECV | FI_SEND | FI_RECV;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;  // one thread calls in
    const char* provider = std::getenv("FI_PROVIDER");
    hints->fabric_attr->prov_name = strdup(provider ? provider : "tcp;ofi_rxm");
    // The newest API both the headers and the library know, as sdk-ofi asks.
    uint32_t api = std::min<uint32_t>(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), fi_version());
    int rc = fi_getinfo(api, nullptr, nullptr, 0, hints, &info_);
    fi_freeinfo(hints);
    if (rc != 0) return fail(why, "fi_getinfo", rc);
    fid_fabric* fabric = nullptr;
    fid_domain* domain = nullptr;
    fid_cq* cq = nullptr;
    fid_av* av = nullptr;
    fid_ep* ep = nullptr;
    if ((rc = fi_fabric(info_->fabric_attr, &fabric, nullptr)) != 0)
      return fail(why, "fi_fabric", rc);
    fabric_ = own(fabric);
    if ((rc = fi_domain(fabric, info_, &domain, nullptr)) != 0) return fail(why, "fi_domain", rc);
    domain_ = own(domain);
    fi_cq_attr cqAttr{};
    cqAttr.format = FI_CQ_FORMAT_TAGGED;
    cqAttr.wait_obj = FI_WAIT_NONE;  // polled
    cqAttr.size = 0;                 // the provider's default
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
    // Buffer 0 is the send buffer, the others receive buffers.
    size_t count = 1 + static_cast<size_t>(std::clamp(window, 1, 4));
    buffers_.assign(count, std::vector<char>(std::max<size_t>(maxSize, 1), 1));
    for (std::vector<char>& buffer : buffers_) {
      fid_mr* mr = nullptr;
      uint64_t key = mrs_.size();  // unique, for providers without FI_MR_PROV_KEY
      if ((rc = fi_mr_reg(domain, buffer.data(), buffer.size(), FI_SEND | FI_RECV, 0, key, 0, &mr,
                          nullptr)) != 0) {
        return fail(why, "fi_mr_reg", rc);
      }
      mrs_.push_back(own(mr));
      if (info_->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        if ((rc = fi_mr_bind(mr, &ep->fid, 0)) != 0 || (rc = fi_mr_enable(mr)) != 0) {
          return fail(why, "binding a registration to the endpoint", rc);
        }
      }
      descs_.push_back(fi_mr_desc(mr));
    }
    // Reused round robin: more than can be in flight (a window, or the
    // ping-pong's receives posted ahead with a send between each).
    contexts_.resize(static_cast<size_t>(std::max(window, 2 * kPrepost)) + 2);

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
    // The plugin run's connection exists before its first measured message
    // (its connect and accept exchange a message); rxm connects on first
    // use, so one small message each way sets this one up too.
    if (!pingpong(!pair.isChild(), 1, 1)) {
      *why = "the first exchange of messages failed";
      return false;
    }
    return pair.barrier();
  }

  std::string label() const override { return "raw libfabric"; }
  std::string describe() const override { return describe_; }

  bool stream(bool sender, size_t size, int iters, int window) override {
    int posted = 0, completed = 0;
    size_t receiveBuffers = buffers_.size() - 1;
    while (completed < iters) {
      while (posted < iters && posted - completed < window) {
        if (!post(sender, size, static_cast<size_t>(posted) % receiveBuffers)) return false;
        posted++;
      }
      Done done;
      if (!reap(&done)) return false;
      completed += sender ? done.sends : done.recvs;
    }
    return true;
  }

  // As the plugin run does: both sides keep kPrepost receives posted ahead,
  // and each send is waited for before the next step.
  bool pingpong(bool initiator, size_t size, int iters) override {
    int recvsPosted = 0, recvsDone = 0;
    while (recvsPosted < std::min(iters, kPrepost)) {
      if (!post(false, size, 0)) return false;
      recvsPosted++;
    }
    for (int i = 0; i < iters; i++) {
      if (initiator && !sendAndWait(size, &recvsDone)) return false;
      while (recvsDone <= i) {
        Done done;
        if (!reap(&done)) return false;
        recvsDone += done.recvs;
      }
      if (!initiator && !sendAndWait(size, &recvsDone)) return false;
      if (recvsPosted < iters) {
        if (!post(false, size, 0)) return false;
        recvsPosted++;
      }
    }
    return true;
  }

 private:
  static bool fail(std::string* why, const char* what, int rc) {
    *why = std::string(what) + ": " + fi_strerror(-rc);
    return false;
  }

  struct Done {
    int sends = 0;
    int recvs = 0;
  };

  // A send comes from the send buffer; a receive lands in receive buffer
  // `receiveBuffer`.
  bool post(bool sending, size_t size, size_t receiveBuffer) {
    fi_context2* ctx = &contexts_[next_++ % contexts_.size()];
    size_t b = sending ? 0 : 1 + receiveBuffer;
    for (;;) {
      ssize_t rc = sending
                       ? fi_tsend(ep_ptr_, buffers_[b].data(), size, descs_[b], peer_, 7, ctx)
                       : fi_trecv(ep_ptr_, buffers_[b].data(), size, descs_[b], peer_, 7, 0, ctx);
      if (rc == 0) return true;
      if (rc != -FI_EAGAIN) return false;
      if (!reapInto(&pending_)) return false;  // make progress, keep the count
    }
  }

  bool sendAndWait(size_t size, int* recvsDone) {
    if (!post(true, size, 0)) return false;
    for (;;) {
      Done done;
      if (!reap(&done)) return false;
      *recvsDone += done.recvs;
      if (done.sends > 0) return true;
    }
  }

  // Completions since the last call, including those seen while posting.
  bool reap(Done* done) {
    *done = pending_;
    pending_ = Done();
    return reapInto(done);
  }

  bool reapInto(Done* done) {
    fi_cq_tagged_entry entries[16];
    ssize_t n = fi_cq_read(cq_ptr_, entries, 16);
    if (n == -FI_EAGAIN) return true;
    if (n < 0) return false;
    for (ssize_t i = 0; i < n; i++) {
      if (entries[i].flags & FI_RECV) {
        done->recvs++;
      } else {
        done->sends++;
      }
    }
    return true;
  }

  fi_info* info_ = nullptr;
  std::unique_ptr<fid, FidCloser> fabric_, domain_, cq_, av_, ep_;
  std::vector<std::unique_ptr<fid, FidCloser>> mrs_;
  fid_ep* ep_ptr_ = nullptr;
  fid_cq* cq_ptr_ = nullptr;
  fi_addr_t peer_ = FI_ADDR_UNSPEC;
  std::vector<std::vector<char>> buffers_;
  std::vector<void*> descs_;
  std::vector<fi_context2> contexts_;
  size_t next_ = 0;
  Done pending_;
  std::string describe_;
};

}  // namespace

std::unique_ptr<Peer> FabricPeer::open(size_t maxSize, int window, Pair& pair, std::string* why) {
  auto peer = std::make_unique<RawFabric>();
  if (!peer->init(maxSize, window, pair, why)) return nullptr;
  return peer;
}

}  // namespace ncclnet::bench
