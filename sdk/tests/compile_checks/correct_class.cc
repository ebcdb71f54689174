// SPDX-License-Identifier: Apache-2.0
// A class with every member, each with the signature plugin_contract.hpp
// documents, exports without an error or a warning.
// expect: compiles
#include <ncclnet/plugin.hpp>

class CorrectNet {
 public:
  static constexpr const char* kName = "correct";
  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<CorrectNet>* out);
  ncclResult_t devices(int* ndev);
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
  ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm);
  ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t** sendDevComm);
  ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm);
  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle);
  ncclResult_t deregMr(void* comm, void* mhandle);
  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                     void** request);
  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void** phandles, void** request);
  ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                      void** request);
  ncclResult_t test(void* request, int* done, int* sizes);
  ncclResult_t closeSend(void* sendComm);
  ncclResult_t closeRecv(void* recvComm);
  ncclResult_t closeListen(void* listenComm);
  ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                           void** mhandle);
  ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr_mhandle);
  ncclResult_t irecvConsumed(void* recvComm, int n, void* request);
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props);
  ncclResult_t setNetAttr(const ncclnet::CommContext& ctx, const ncclNetAttr_v12_t& attr);
  const ncclnet::ParamTable& params() const;
};

NCCLNET_EXPORT_PLUGIN(CorrectNet)
