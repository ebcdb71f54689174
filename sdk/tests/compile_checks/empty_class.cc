// SPDX-License-Identifier: Apache-2.0
// An empty class: one error per required member, each naming the member and
// its signature, and no other error.
// clang-format off
// expect-error: EmptyNet must declare: static constexpr const char* kName (the name NCCL_NET matches)
// expect-error: EmptyNet must declare: static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<EmptyNet>* out)
// expect-error: EmptyNet must declare: ncclResult_t devices(int* ndev)
// expect-error: EmptyNet must declare: ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props)
// expect-error: EmptyNet must declare: ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm)
// expect-error: EmptyNet must declare: ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v12_t** sendDevComm)
// expect-error: EmptyNet must declare: ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm)
// expect-error: EmptyNet must declare: ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle)
// expect-error: EmptyNet must declare: ncclResult_t deregMr(void* comm, void* mhandle)
// expect-error: EmptyNet must declare: ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle, void** request)
// expect-error: EmptyNet must declare: ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles, void** phandles, void** request)
// expect-error: EmptyNet must declare: ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request)
// expect-error: EmptyNet must declare: ncclResult_t test(void* request, int* done, int* sizes)
// expect-error: EmptyNet must declare: ncclResult_t closeSend(void* sendComm)
// expect-error: EmptyNet must declare: ncclResult_t closeRecv(void* recvComm)
// expect-error: EmptyNet must declare: ncclResult_t closeListen(void* listenComm)
// clang-format on
#include <ncclnet/plugin.hpp>

class EmptyNet {};

NCCLNET_EXPORT_PLUGIN(EmptyNet)
