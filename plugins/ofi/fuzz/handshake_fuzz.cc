// SPDX-License-Identifier: Apache-2.0
// Fuzzes what reaches sdk-ofi from other processes during connection setup,
// through the built plugin's table over tcp;ofi_rxm on loopback:
//
//   connect message  the input, sent from a raw libfabric endpoint of the
//                    fuzzer's own to a live listen's connect tag, as a stray
//                    or a broken peer would (plugin.cc: accept);
//   handle           the input as the 128 bytes NCCL hands connect (they
//                    come from the peer through NCCL's bootstrap).
//
// The first input byte picks the case (bit 0) and what is made right so
// that the rest gets further: bit 1 the magic, bit 2 the address (the raw
// endpoint's own for a connect message, the live listen's for a handle).
//
// Checks beyond "no crash": a connect message without the right magic never
// makes accept fail (a stray; contract rule 56); and after any input the
// plugin's own connect to its listen still completes, so no input poisons
// later connects (the unusable-address case of docs/reliability.md). The
// made-up addresses would be dialled, so the process runs in a network
// namespace of its own (root only; otherwise exit code 77, skip).
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "comm.hpp"
#include "ncclnet/testing/net_polling.hpp"
#include "ncclnet/testing/private_network.hpp"
#include "tag.hpp"

namespace {

using ncclnet::ofi::ConnectMessage;
using ncclnet::ofi::Handle;
using Clock = std::chrono::steady_clock;

constexpr auto kDeadline = std::chrono::seconds(5);
// Connects the fuzzer leaves pending (a handle naming no live listen) live
// until finalize; the plugin starts afresh this often to bound them.
constexpr unsigned kRestartEvery = 256;
enum Mode : uint8_t { kHandleCase = 1, kRightMagic = 2, kRightAddress = 4 };

void quietLogger(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "sdk-ofi handshake fuzz: %s\n", what);
  std::abort();
}

void check(int rc, const char* what) {
  if (rc == 0) return;
  std::fprintf(stderr, "sdk-ofi handshake fuzz: %s: %s\n", what, fi_strerror(-rc));
  std::abort();
}

// A bare tagged endpoint on the same provider, to send raw bytes with.
struct RawEndpoint {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  std::vector<uint8_t> name;
  ncclnet::ofi::TagLayout tags;

  void open() {
    fi_info* hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED | FI_SEND | FI_RECV;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    check(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info), "fi_getinfo");
    fi_freeinfo(hints);
    check(fi_fabric(info->fabric_attr, &fabric, nullptr), "fi_fabric");
    check(fi_domain(fabric, info, &domain, nullptr), "fi_domain");
    fi_av_attr avAttr{};
    avAttr.type = FI_AV_TABLE;
    check(fi_av_open(domain, &avAttr, &av, nullptr), "fi_av_open");
    fi_cq_attr cqAttr{};
    cqAttr.format = FI_CQ_FORMAT_TAGGED;
    check(fi_cq_open(domain, &cqAttr, &cq, nullptr), "fi_cq_open");
    check(fi_endpoint(domain, info, &ep, nullptr), "fi_endpoint");
    check(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind av");
    check(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq");
    check(fi_enable(ep), "fi_enable");
    size_t length = 0;
    fi_getname(&ep->fid, nullptr, &length);
    name.resize(length);
    check(fi_getname(&ep->fid, name.data(), &length), "fi_getname");
    using ncclnet::ofi::TagLayout;
    if (!TagLayout::forWidth(TagLayout::widthOf(info->ep_attr->mem_tag_format), &tags)) {
      fail("the provider's tags are too narrow");
    }
  }

  // Completion of the one send in flight; false when the provider failed it.
  bool drain(const Clock::time_point& deadline) {
    for (;;) {
      fi_cq_tagged_entry entry;
      ssize_t n = fi_cq_read(cq, &entry, 1);
      if (n == 1) return true;
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry error{};
        fi_cq_readerr(cq, &error, 0);
        return false;
      }
      if (Clock::now() > deadline) fail("the raw endpoint's send never completed");
    }
  }
};

struct Rig {
  ncclnet::testing::PluginSession session{{.plugin = SDK_OFI_PLUGIN_PATH,
                                           .netName = "sdk-ofi",
                                           .version = 12,
                                           .loaderCheck = true,
                                           .commId = 1,
                                           .logger = quietLogger}};
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  RawEndpoint raw;
  unsigned inputs = 0;
};

Rig* rig = nullptr;

void startPlugin() {
  if (rig->session.init() != ncclSuccess) fail("init");
  if (rig->session.net().listen(rig->session.ctx(), 0, rig->handle, &rig->listenComm) !=
      ncclSuccess)
    fail("listen");
}

void stopPlugin() {
  rig->session.net().closeListen(rig->listenComm);
  rig->session.finalize();
}

void setUp() {
  ncclnet::testing::enterPrivateNetworkOrSkip("sdk-ofi handshake fuzz");
  setenv("FI_PROVIDER", "tcp;ofi_rxm", 1);
  setenv("FI_TCP_IFACE", "lo", 1);
  setenv("NCCLNET_OFI_DOMAINS", "lo", 1);
  rig = new Rig;
  if (!rig->session.ok()) fail(rig->session.error().c_str());
  startPlugin();
  rig->raw.open();
}

// The plugin's own connect to its listen still completes.
void realPeerStillAccepted() {
  if (const char* why = ncclnet::testing::listenStillAccepts(rig->session, rig->handle,
                                                             rig->listenComm, kDeadline.count())) {
    fail(why);
  }
}

void connectMessageCase(uint8_t mode, const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if ((mode & kRightMagic) && bytes.size() >= sizeof(uint32_t)) {
    uint32_t magic = ncclnet::ofi::kConnectMagic;
    std::memcpy(bytes.data(), &magic, sizeof(magic));
  }
  constexpr size_t kAddressAt = offsetof(ConnectMessage, address);
  if ((mode & kRightAddress) && bytes.size() >= kAddressAt + rig->raw.name.size()) {
    uint16_t length = static_cast<uint16_t>(rig->raw.name.size());
    std::memcpy(bytes.data() + offsetof(ConnectMessage, addressLength), &length, sizeof(length));
    std::memcpy(bytes.data() + kAddressAt, rig->raw.name.data(), rig->raw.name.size());
  }
  uint32_t magic = 0;
  if (bytes.size() >= sizeof(magic)) std::memcpy(&magic, bytes.data(), sizeof(magic));
  bool stray = magic != ncclnet::ofi::kConnectMagic;

  Handle h;
  std::memcpy(&h, rig->handle, sizeof(h));
  fi_addr_t listener = FI_ADDR_UNSPEC;
  if (fi_av_insert(rig->raw.av, h.address, 1, &listener, 0, nullptr) != 1) fail("fi_av_insert");
  fi_context2 context{};
  uint64_t tag = rig->raw.tags.connect(h.listenId);
  auto deadline = Clock::now() + kDeadline;
  ssize_t rc;
  while ((rc = fi_tsend(rig->raw.ep, bytes.data(), bytes.size(), nullptr, listener, tag,
                        &context)) == -FI_EAGAIN) {
    fi_cq_tagged_entry entry;
    fi_cq_read(rig->raw.cq, &entry, 1);
    if (Clock::now() > deadline) fail("the raw endpoint could not send");
  }
  check(static_cast<int>(rc), "fi_tsend");
  // Accept steps the plugin's progress; the raw endpoint its own.
  bool sent = false;
  int stepsAfterSend = 0;
  while (stepsAfterSend < 200) {
    void* recvComm = nullptr;
    ncclResult_t res = rig->session.net().accept(rig->listenComm, &recvComm, nullptr);
    if (res != ncclSuccess) {
      if (stray) fail("accept failed on a connect message with the wrong magic");
      break;
    }
    if (recvComm != nullptr) {
      rig->session.net().closeRecv(recvComm);
      break;
    }
    if (!sent) {
      fi_cq_tagged_entry entry;
      ssize_t n = fi_cq_read(rig->raw.cq, &entry, 1);
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry error{};
        fi_cq_readerr(rig->raw.cq, &error, 0);
      }
      sent = n == 1 || n == -FI_EAVAIL;
      if (Clock::now() > deadline) fail("the raw endpoint's send never completed");
    } else {
      stepsAfterSend++;
    }
  }
  fi_av_remove(rig->raw.av, &listener, 1, 0);
}

void handleCase(uint8_t mode, const uint8_t* data, size_t size) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  std::memcpy(handle, data, std::min(size, sizeof(handle)));
  if (mode & kRightMagic) {
    uint32_t magic = ncclnet::ofi::kHandleMagic;
    std::memcpy(handle + offsetof(Handle, magic), &magic, sizeof(magic));
  }
  if (mode & kRightAddress) {
    constexpr size_t kFrom = offsetof(Handle, addressLength);
    std::memcpy(handle + kFrom, rig->handle + kFrom, sizeof(uint16_t));
    constexpr size_t kAddress = offsetof(Handle, address);
    std::memcpy(handle + kAddress, rig->handle + kAddress, sizeof(Handle::address));
  }
  // A handle naming nobody leaves a connect pending: a few steps only.
  for (int step = 0; step < 20; step++) {
    void* sendComm = nullptr;
    if (rig->session.net().connect(rig->session.ctx(), 0, handle, &sendComm, nullptr) !=
        ncclSuccess)
      break;
    if (sendComm != nullptr) {
      rig->session.net().closeSend(sendComm);
      break;
    }
    void* recvComm = nullptr;
    if (rig->session.net().accept(rig->listenComm, &recvComm, nullptr) == ncclSuccess && recvComm) {
      rig->session.net().closeRecv(recvComm);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setUp();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t mode = data[0];
  if (mode & kHandleCase) {
    handleCase(mode, data + 1, size - 1);
  } else {
    connectMessageCase(mode, data + 1, size - 1);
  }
  if (++rig->inputs % 32 == 0) realPeerStillAccepted();
  if (rig->inputs % kRestartEvery == 0) {
    stopPlugin();
    startPlugin();
  }
  return 0;
}
