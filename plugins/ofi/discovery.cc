// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: provider discovery (see discovery.hpp).
#include "discovery.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "dmabuf.hpp"

namespace ncclnet::ofi {
namespace {

// The hints every NIC must satisfy. Tagged messages with directed receive
// are all the data path uses; FI_CONTEXT2 space is in every operation
// context; registration is offered in every mode the plugin can honour.
InfoPtr makeHints(bool hmem) {
  InfoPtr hints(fi_allocinfo());
  if (!hints) return hints;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_TAGGED | FI_DIRECTED_RECV | FI_SEND | FI_RECV;
  // GPU memory also needs an RMA read of the endpoint's own memory: that is
  // how iflush orders the NIC's PCIe writes before NCCL reads the data.
  if (hmem) hints->caps |= FI_HMEM | FI_RMA | FI_READ | FI_REMOTE_READ;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  if (hmem) hints->domain_attr->mr_mode |= FI_MR_HMEM;
  // Every call on an endpoint is made under the endpoint's lock.
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  return hints;
}

InfoPtr getInfo(bool hmem, int* rc) {
  InfoPtr hints = makeHints(hmem);
  if (!hints) {
    *rc = -FI_ENOMEM;
    return nullptr;
  }
  fi_info* list = nullptr;
  *rc = fi_getinfo(apiVersion(), nullptr, nullptr, 0, hints.get(), &list);
  return InfoPtr(*rc == 0 ? list : nullptr);
}

bool sameNic(const fi_info* a, const fi_info* b) {
  return strcmp(a->fabric_attr->prov_name, b->fabric_attr->prov_name) == 0 &&
         strcmp(a->domain_attr->name, b->domain_attr->name) == 0;
}

std::string readFirstLine(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

std::string realPath(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return "";
  return resolved;
}

// The NIC's PCI directory: from libfabric's NIC attributes when the
// provider fills them, else from the netdev of the same name (what NCCL's
// own socket transport reports), else none (virtual or loopback).
std::string pciPathOf(const fi_info* info) {
  if (info->nic != nullptr && info->nic->bus_attr != nullptr &&
      info->nic->bus_attr->bus_type == FI_BUS_PCI) {
    const fi_pci_attr& pci = info->nic->bus_attr->attr.pci;
    char path[64];
    std::snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x", pci.domain_id,
                  pci.bus_id, pci.device_id, pci.function_id);
    std::string resolved = realPath(path);
    if (!resolved.empty()) return resolved;
  }
  return realPath(std::string("/sys/class/net/") + info->domain_attr->name + "/device");
}

// Link speed in Mbps: libfabric's link attribute (bits per second), else the
// netdev's /sys speed (Mbps), else 10 Gb/s, which is also what NCCL assumes
// for a device that reports nothing.
int speedOf(const fi_info* info) {
  constexpr int kFallbackMbps = 10000;
  if (info->nic != nullptr && info->nic->link_attr != nullptr && info->nic->link_attr->speed > 0) {
    size_t mbps = info->nic->link_attr->speed / 1000000;
    if (mbps > 0 && mbps < INT_MAX) return static_cast<int>(mbps);
  }
  std::string text =
      readFirstLine(std::string("/sys/class/net/") + info->domain_attr->name + "/speed");
  int mbps = std::atoi(text.c_str());
  return mbps > 0 ? mbps : kFallbackMbps;
}

// Same NIC, same guid, in every process of the host: a hash of its names.
uint64_t guidOf(const fi_info* info) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a
  auto mix = [&hash](const char* text) {
    for (; *text; ++text) hash = (hash ^ static_cast<unsigned char>(*text)) * 0x100000001b3ull;
    hash = (hash ^ '/') * 0x100000001b3ull;
  };
  mix(info->fabric_attr->prov_name);
  mix(info->domain_attr->name);
  return hash;
}

// FI_HMEM in the caps says the provider knows heterogeneous memory, not that
// this libfabric build can register CUDA memory (Debian's shm claims FI_HMEM
// and answers -FI_ENOSYS). A registration with iface FI_HMEM_CUDA tells:
// -FI_ENOSYS / -FI_EOPNOTSUPP mean no CUDA support at all. The probe buffer
// is host memory, so a CUDA-capable build refuses it with another error, or
// accepts it; either way it did not call it unsupported.
bool cudaRegistrationSupported(const fi_info* info, int* rc) {
  fid_fabric* fabricRaw = nullptr;
  *rc = fi_fabric(info->fabric_attr, &fabricRaw, nullptr);
  FabricPtr fabric(fabricRaw);
  if (*rc != 0) return false;
  fid_domain* domainRaw = nullptr;
  *rc = fi_domain(fabricRaw, const_cast<fi_info*>(info), &domainRaw, nullptr);
  DomainPtr domain(domainRaw);
  if (*rc != 0) return false;
  std::vector<char> probe(4096);
  iovec iov{probe.data(), probe.size()};
  fi_mr_attr attr{};
  attr.mr_iov = &iov;
  attr.iov_count = 1;
  attr.access = FI_SEND | FI_RECV;
  attr.requested_key = 1;
  attr.iface = FI_HMEM_CUDA;
  fid_mr* mrRaw = nullptr;
  *rc = fi_mr_regattr(domainRaw, &attr, 0, &mrRaw);
  MrPtr mr(mrRaw);
  return *rc != -FI_ENOSYS && *rc != -FI_EOPNOTSUPP;
}

bool listed(const std::vector<std::string>& names, const char* name) {
  for (const std::string& wanted : names) {
    if (strcasecmp(wanted.c_str(), name) == 0) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(start, comma - start);
    size_t first = item.find_first_not_of(" \t");
    size_t last = item.find_last_not_of(" \t");
    if (first != std::string::npos) out.push_back(item.substr(first, last - first + 1));
    start = comma + 1;
  }
  return out;
}

bool isLoopbackInfo(const fi_info* info) {
  if (strcmp(info->domain_attr->name, "lo") == 0) return true;
  if (info->src_addr == nullptr) return false;
  if (info->addr_format == FI_SOCKADDR_IN && info->src_addrlen >= sizeof(sockaddr_in)) {
    auto* in = static_cast<const sockaddr_in*>(info->src_addr);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (info->addr_format == FI_SOCKADDR_IN6 && info->src_addrlen >= sizeof(sockaddr_in6)) {
    auto* in6 = static_cast<const sockaddr_in6*>(info->src_addr);
    return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
  }
  return false;
}

ncclResult_t discoverNics(const Config& config, const Logger& log, std::vector<Nic>* nics,
                          std::string* why) {
  nics->clear();
  int rc = 0;
  InfoPtr all = getInfo(false, &rc);
  if (!all) {
    *why = "fi_getinfo found no FI_EP_RDM provider with FI_TAGGED and FI_DIRECTED_RECV (" +
           fiError(rc) +
           "); FI_PROVIDER=" + (getenv("FI_PROVIDER") ? getenv("FI_PROVIDER") : "(unset)");
    return ncclSystemError;
  }
  int hmemRc = 0;
  InfoPtr gpu = config.hmem ? getInfo(true, &hmemRc) : nullptr;

  // The provider: the one asked for, else the first with a usable tag width.
  std::string provider = config.provider;
  std::vector<const fi_info*> candidates;
  for (const fi_info* info = all.get(); info != nullptr; info = info->next) {
    const char* name = info->fabric_attr->prov_name;
    if (!provider.empty() && strcasecmp(provider.c_str(), name) != 0) continue;
    TagLayout layout;
    if (!TagLayout::forWidth(TagLayout::widthOf(info->ep_attr->mem_tag_format), &layout)) {
      NCCLNET_INFO(log, NCCL_INIT | NCCL_NET, "skipping %s/%s: %d tag bits, %d needed", name,
                   info->domain_attr->name, TagLayout::widthOf(info->ep_attr->mem_tag_format),
                   TagLayout::kMinWidth);
      continue;
    }
    if (provider.empty()) provider = name;
    if (strcasecmp(provider.c_str(), name) != 0) continue;
    bool duplicate = false;  // providers list a domain once per address format and mode
    for (const fi_info* seen : candidates) duplicate = duplicate || sameNic(seen, info);
    if (!duplicate) candidates.push_back(info);
  }
  if (candidates.empty()) {
    *why = config.provider.empty()
               ? std::string("no provider offers at least 43 tag bits")
               : "provider '" + config.provider + "' (NCCLNET_OFI_PROVIDER) is not offered" +
                     " for FI_EP_RDM + FI_TAGGED + FI_DIRECTED_RECV (check FI_PROVIDER too)";
    return ncclSystemError;
  }

  std::vector<std::string> wanted = splitList(config.domains);
  bool anyNetwork = false;
  for (const fi_info* info : candidates) anyNetwork = anyNetwork || !isLoopbackInfo(info);
  for (const fi_info* info : candidates) {
    const char* domain = info->domain_attr->name;
    bool loopback = isLoopbackInfo(info);
    if (!wanted.empty() && !listed(wanted, domain)) continue;
    // Loopback only when asked for by name, or when it is all there is
    // (e.g. FI_TCP_IFACE=lo): NCCL must not pick it between hosts.
    if (wanted.empty() && loopback && anyNetwork) continue;
    Nic nic;
    nic.info = dupInfo(info);
    for (const fi_info* g = gpu.get(); g != nullptr; g = g->next) {
      if (!sameNic(g, info)) continue;
      int probeRc = 0;
      if (cudaRegistrationSupported(g, &probeRc)) {
        nic.info = dupInfo(g);
        nic.hmem = true;
      } else {
        NCCLNET_INFO(log, NCCL_INIT | NCCL_NET,
                     "%s/%s offers FI_HMEM but cannot register CUDA memory (%s): host memory "
                     "only",
                     g->fabric_attr->prov_name, domain, fiError(probeRc).c_str());
      }
      break;
    }
    if (!nic.info) {
      *why = "out of memory copying fi_info";
      return ncclSystemError;
    }
    nic.name = domain;
    nic.provider = info->fabric_attr->prov_name;
    nic.pciPath = pciPathOf(info);
    nic.speedMbps = speedOf(info);
    nic.guid = guidOf(info);
    nic.loopback = loopback;
    nic.dmabufWhyNot = dmaBufUnavailable(nic.info.get(), nic.hmem, fi_version());
    nic.dmabuf = nic.dmabufWhyNot.empty();
    TagLayout::forWidth(TagLayout::widthOf(info->ep_attr->mem_tag_format), &nic.tags);
    NCCLNET_INFO(log, NCCL_INIT | NCCL_NET,
                 "NIC %zu: provider %s domain %s fabric %s%s, %d Mbps, pci %s, %d tag bits, "
                 "GPU memory %s, DMA-BUF %s%s",
                 nics->size(), nic.provider.c_str(), domain, info->fabric_attr->name,
                 loopback ? " (loopback)" : "", nic.speedMbps,
                 nic.pciPath.empty() ? "none" : nic.pciPath.c_str(), nic.tags.width(),
                 nic.hmem ? "yes (FI_HMEM)" : "no",
                 nic.dmabuf ? "yes" : "no: ", nic.dmabufWhyNot.c_str());
    nics->push_back(std::move(nic));
  }
  if (nics->empty()) {
    *why = "provider " + provider + " has no domain matching NCCLNET_OFI_DOMAINS='" +
           config.domains + "'";
    return ncclSystemError;
  }
  return ncclSuccess;
}

}  // namespace ncclnet::ofi
