// SPDX-License-Identifier: Apache-2.0
// sdk-abi-probe (abi_probe.hpp): exported by the SDK's macro, so each of its
// seven tables is the SDK's own export side. Every call succeeds; every
// request is done at its first test.
#include <algorithm>
#include <memory>

#include "abi_probe.hpp"
#include "ncclnet/plugin.hpp"

namespace {

using ncclnet::probe::ProbeComm;

struct ProbeRequest {
  int n;  // the sizes a test reports
};

char kDeviceName[] = "probe0";
char kPciPath[] = "/sys/devices/virtual/net/lo";

ProbeComm* probe(void* comm) {
  return static_cast<ProbeComm*>(comm);
}

class ProbeNet {
 public:
  static constexpr const char* kName = "sdk-abi-probe";
  static ncclResult_t create(const ncclnet::InitArgs&, std::unique_ptr<ProbeNet>* out) {
    *out = std::make_unique<ProbeNet>();
    return ncclSuccess;
  }
  ncclResult_t devices(int* ndev) {
    *ndev = 1;
    return ncclSuccess;
  }
  ncclResult_t getProperties(int, ncclNetProperties_v12_t* props) {
    props->name = kDeviceName;
    props->pciPath = kPciPath;
    props->ptrSupport = NCCL_PTR_HOST;
    props->speed = 1000;
    props->maxComms = 1024;
    props->maxRecvs = ncclnet::kMaxGroupedRecvs;
    return ncclSuccess;
  }
  ncclResult_t listen(const ncclnet::CommContext&, int, void*, void** listenComm) {
    *listenComm = new ProbeComm;
    return ncclSuccess;
  }
  ncclResult_t connect(const ncclnet::CommContext& ctx, int, void*, void** sendComm,
                       ncclNetDeviceHandle_v12_t**) {
    auto* comm = new ProbeComm;
    comm->trafficClass = ctx.trafficClass;
    *sendComm = comm;
    return ncclSuccess;
  }
  ncclResult_t accept(void*, void** recvComm, ncclNetDeviceHandle_v12_t**) {
    *recvComm = new ProbeComm;
    return ncclSuccess;
  }
  ncclResult_t regMr(void* comm, void*, size_t size, int, void** mhandle) {
    probe(comm)->calls++;
    probe(comm)->size = size;
    *mhandle = comm;
    return ncclSuccess;
  }
  ncclResult_t deregMr(void*, void*) { return ncclSuccess; }
  ncclResult_t isend(void* comm, void*, size_t size, int, void*, void*, void** request) {
    probe(comm)->calls++;
    probe(comm)->size = size;
    *request = new ProbeRequest{1};
    return ncclSuccess;
  }
  ncclResult_t irecv(void* comm, int n, void**, size_t* sizes, int*, void**, void**,
                     void** request) {
    ProbeComm* c = probe(comm);
    c->calls++;
    c->n = n;
    const int kept = std::clamp(n, 0, ncclnet::kMaxGroupedRecvs);
    for (int i = 0; i < kept; i++) c->sizes[i] = sizes[i];
    *request = new ProbeRequest{std::max(kept, 1)};
    return ncclSuccess;
  }
  ncclResult_t iflush(void*, int, void**, int*, void**, void** request) {
    *request = nullptr;  // nothing to flush: host memory
    return ncclSuccess;
  }
  ncclResult_t test(void* request, int* done, int* sizes) {
    std::unique_ptr<ProbeRequest> r(static_cast<ProbeRequest*>(request));
    *done = 1;
    // Nothing arrives: 0 bytes in each buffer (a send's size is not read).
    for (int i = 0; sizes != nullptr && i < r->n; i++) sizes[i] = 0;
    return ncclSuccess;
  }
  ncclResult_t closeSend(void* comm) { return close(comm); }
  ncclResult_t closeRecv(void* comm) { return close(comm); }
  ncclResult_t closeListen(void* comm) { return close(comm); }

 private:
  static ncclResult_t close(void* comm) {
    delete probe(comm);
    return ncclSuccess;
  }
};

}  // namespace

NCCLNET_EXPORT_PLUGIN(ProbeNet)
