// SPDX-License-Identifier: Apache-2.0
// A CollNet class without iallgather (NCCL 2.28 and newer would call the
// table's slot anyway), with an iallreduce of int count (a narrowing of
// NCCL's 64-bit counts) and an optional makeVDevice of another signature:
// one message each, nothing from inside the SDK.
// clang-format off
// expect-error: WrongCollNet must declare: ncclResult_t iallgather(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v12_t* recvParts, size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMhandle, void** request)
// expect-error: WrongCollNet must declare: ncclResult_t iallreduce(void* collComm, void* sendData, void* recvData, size_t count, ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle, void* recvMhandle, void** request)
// expect-error: WrongCollNet declares the optional makeVDevice with another signature; it must be: ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props)
// clang-format on
#include <ncclnet/collnet.hpp>

class WrongCollNet {
 public:
  static constexpr const char* kName = "wrong-collnet";
  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<WrongCollNet>* out);
  ncclResult_t devices(int* ndev);
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
  ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm);
  ncclResult_t connect(void* const* handles, int nranks, int rank, void* listenComm,
                       void** collComm);
  ncclResult_t reduceSupport(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported);
  ncclResult_t regMr(void* collComm, void* data, size_t size, int type, void** mhandle);
  ncclResult_t deregMr(void* collComm, void* mhandle);
  ncclResult_t iallreduce(void* collComm, void* sendData, void* recvData, int count,
                          ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,
                          void* recvMhandle, void** request);
  ncclResult_t ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts,
                              void* recvData, size_t bytesPerRank, size_t windowOffset,
                              size_t windowBytes, ncclDataType_t dataType, ncclRedOp_t redOp,
                              void* recvMhandle, void** request);
  ncclResult_t iflush(void* collComm, void* data, int size, void* mhandle, void** request);
  ncclResult_t test(void* request, int* done, int* size);
  ncclResult_t closeColl(void* collComm);
  ncclResult_t closeListen(void* listenComm);
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v9_t* props);
};

NCCLNET_EXPORT_COLLNET_PLUGIN(WrongCollNet)
