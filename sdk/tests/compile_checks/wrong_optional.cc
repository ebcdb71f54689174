// SPDX-License-Identifier: Apache-2.0
// An optional member with another signature is an error, not an absent
// member: irecvConsumed without its request, makeVDevice overloaded for
// older structs only, and params() returning a copy.
// clang-format off
// expect-error: WrongOptionalNet declares the optional irecvConsumed with another signature; it must be: ncclResult_t irecvConsumed(void* recvComm, int n, void* request)
// expect-error: WrongOptionalNet declares the optional makeVDevice with another signature; it must be: ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props)
// expect-error: WrongOptionalNet declares the optional params with another signature; it must be: const ncclnet::ParamTable& params() const
// clang-format on
#include <ncclnet/plugin.hpp>

class WrongOptionalNet {
 public:
  static constexpr const char* kName = "wrong-optional";
  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<WrongOptionalNet>* out);
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
  ncclResult_t irecvConsumed(void* recvComm, int n);
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v9_t* props);
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v11_t* props);
  ncclnet::ParamTable params() const;
};

NCCLNET_EXPORT_PLUGIN(WrongOptionalNet)
