// SPDX-License-Identifier: Apache-2.0
// A complete CollNet class, with both optional members, exports the
// tables v6 to v12 without a diagnostic.
// expect: compiles
#include <ncclnet/collnet.hpp>

class GoodCollNet {
 public:
  static constexpr const char* kName = "good-collnet";
  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<GoodCollNet>* out);
  ncclResult_t devices(int* ndev);
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
  ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm);
  ncclResult_t connect(void* const* handles, int nranks, int rank, void* listenComm,
                       void** collComm);
  ncclResult_t reduceSupport(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported);
  ncclResult_t regMr(void* collComm, void* data, size_t size, int type, void** mhandle);
  ncclResult_t regMrDmaBuf(void* collComm, void* data, size_t size, int type, uint64_t offset,
                           int fd, void** mhandle);
  ncclResult_t deregMr(void* collComm, void* mhandle);
  ncclResult_t iallreduce(void* collComm, void* sendData, void* recvData, size_t count,
                          ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,
                          void* recvMhandle, void** request);
  ncclResult_t iallgather(void* collComm, void* sendData, int nRecvParts,
                          ncclNetSGE_v12_t* recvParts, size_t bytesPerRank, size_t windowOffset,
                          size_t windowBytes, void* sendMhandle, void** request);
  ncclResult_t ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts,
                              void* recvData, size_t bytesPerRank, size_t windowOffset,
                              size_t windowBytes, ncclDataType_t dataType, ncclRedOp_t redOp,
                              void* recvMhandle, void** request);
  ncclResult_t iflush(void* collComm, void* data, int size, void* mhandle, void** request);
  ncclResult_t test(void* request, int* done, int* size);
  ncclResult_t closeColl(void* collComm);
  ncclResult_t closeListen(void* listenComm);
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props);
};

NCCLNET_EXPORT_COLLNET_PLUGIN(GoodCollNet)
