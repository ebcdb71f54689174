// SPDX-License-Identifier: Apache-2.0
// A class on the object model, with every optional member: its tables are
// built, and no void* member is asked of it.
// expect: compiles
#include <ncclnet/plugin.hpp>

struct Listen {};
struct Send {};
struct Recv {
  bool holdsUntilConsumed() const { return false; }
};
struct Mem {};
struct Req {};
struct Pending {};

class ObjectNet {
 public:
  static constexpr const char* kName = "object-net";
  using ListenComm = Listen;
  using SendComm = Send;
  using RecvComm = Recv;
  using MemHandle = Mem;
  using Request = Req;
  using Connector = Pending;
  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<ObjectNet>* out);
  ncclResult_t devices(int* ndev);
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
  ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle,
                      std::unique_ptr<Listen>* out);
  ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, const void* handle,
                       std::unique_ptr<Pending>* out);
  ncclResult_t connectStep(Pending& connector, std::unique_ptr<Send>* out,
                           ncclNetDeviceHandle_v12_t** sendDevComm);
  ncclResult_t accept(Listen& listen, std::unique_ptr<Recv>* out,
                      ncclNetDeviceHandle_v12_t** recvDevComm);
  ncclResult_t regMr(ncclnet::DataComm<ObjectNet> comm, void* data, size_t size, int type,
                     std::unique_ptr<Mem>* out);
  ncclResult_t deregMr(ncclnet::DataComm<ObjectNet> comm, Mem& mh);
  ncclResult_t isend(Send& comm, void* data, size_t size, int tag, Mem* mh, void* phandle,
                     Req** request);
  ncclResult_t irecv(Recv& comm, int n, void** data, size_t* sizes, int* tags, Mem** mhs,
                     void** phandles, Req** request);
  ncclResult_t iflush(Recv& comm, int n, void** data, int* sizes, Mem** mhs, Req** request);
  ncclResult_t test(Send& comm, Req& request, int* done, int* sizes);
  ncclResult_t test(Recv& comm, Req& request, int* done, int* sizes);
  ncclResult_t close(std::unique_ptr<Send> comm);
  ncclResult_t close(std::unique_ptr<Recv> comm);
  ncclResult_t close(std::unique_ptr<Listen> comm);
  ncclResult_t regMrDmaBuf(ncclnet::DataComm<ObjectNet> comm, void* data, size_t size, int type,
                           uint64_t offset, int fd, std::unique_ptr<Mem>* out);
  ncclResult_t getDeviceMr(ncclnet::DataComm<ObjectNet> comm, Mem& mh, void** dptr_mhandle);
  ncclResult_t irecvConsumed(Recv& comm, int n, Req* request);
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props);
  ncclResult_t setNetAttr(const ncclnet::CommContext& ctx, const ncclNetAttr_v12_t& attr);
};

NCCLNET_EXPORT_PLUGIN(ObjectNet)
