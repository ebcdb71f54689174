// SPDX-License-Identifier: Apache-2.0
// The smallest plugin a vendor can start from: one device, properties, and a
// data path that says it is not there yet.
#include <memory>

#include <ncclnet/plugin.hpp>

namespace {

class HelloNet {
 public:
  static constexpr const char* kName = "hello";

  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<HelloNet>* out) {
    out->reset(new HelloNet(args.logger));
    return ncclSuccess;
  }

  ncclResult_t devices(int* ndev) {
    *ndev = 1;
    return ncclSuccess;
  }
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    if (dev != 0) return ncclInvalidArgument;
    props->name = const_cast<char*>("hello0");
    props->ptrSupport = NCCL_PTR_HOST;
    props->speed = 1000;
    props->maxComms = 1;
    props->maxRecvs = 1;
    props->netDeviceType = NCCL_NET_DEVICE_HOST;
    props->vProps.ndevs = 1;
    props->maxP2pBytes = props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->maxMultiRequestSize = 1;
    props->railId = props->planeId = NCCL_NET_ID_UNDEF;
    return ncclSuccess;
  }
  ncclResult_t listen(const ncclnet::CommContext&, int, void*, void**) { return notYet("listen"); }
  ncclResult_t connect(const ncclnet::CommContext&, int, void*, void**, ncclNetDeviceHandle_v12_t**) {
    return notYet("connect");
  }
  ncclResult_t accept(void*, void**, ncclNetDeviceHandle_v12_t**) { return notYet("accept"); }
  ncclResult_t regMr(void*, void*, size_t, int, void**) { return notYet("regMr"); }
  ncclResult_t deregMr(void*, void*) { return notYet("deregMr"); }
  ncclResult_t isend(void*, void*, size_t, int, void*, void*, void**) { return notYet("isend"); }
  ncclResult_t irecv(void*, int, void**, size_t*, int*, void**, void**, void**) {
    return notYet("irecv");
  }
  ncclResult_t iflush(void*, int, void**, int*, void**, void**) { return notYet("iflush"); }
  ncclResult_t test(void*, int*, int*) { return notYet("test"); }
  ncclResult_t closeSend(void*) { return notYet("closeSend"); }
  ncclResult_t closeRecv(void*) { return notYet("closeRecv"); }
  ncclResult_t closeListen(void*) { return notYet("closeListen"); }

 private:
  explicit HelloNet(ncclnet::Logger log) : log_(log) {}
  ncclResult_t notYet(const char* fn) {
    NCCLNET_WARN(log_, "%s: hello carries no traffic yet", fn);
    return ncclInternalError;
  }
  ncclnet::Logger log_;
};

}  // namespace

NCCLNET_EXPORT_PLUGIN(HelloNet)
