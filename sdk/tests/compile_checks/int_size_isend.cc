// SPDX-License-Identifier: Apache-2.0
// isend with an int size (v6-v8's width) is refused: a call would have
// compiled and narrowed every size above INT_MAX.
// clang-format off
// expect-error: IntSizeNet must declare: ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle, void** request)
// clang-format on
#include <ncclnet/plugin.hpp>

class IntSizeNet {
 public:
  static constexpr const char* kName = "int-size";
  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<IntSizeNet>* out);
  ncclResult_t devices(int* ndev);
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
  ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm);
  ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t** sendDevComm);
  ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm);
  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle);
  ncclResult_t deregMr(void* comm, void* mhandle);
  ncclResult_t isend(void* sendComm, void* data, int size, int tag, void* mhandle, void* phandle,
                     void** request);
  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void** phandles, void** request);
  ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                      void** request);
  ncclResult_t test(void* request, int* done, int* sizes);
  ncclResult_t closeSend(void* sendComm);
  ncclResult_t closeRecv(void* recvComm);
  ncclResult_t closeListen(void* listenComm);
};

NCCLNET_EXPORT_PLUGIN(IntSizeNet)
