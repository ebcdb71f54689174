// SPDX-License-Identifier: Apache-2.0
// A complete RMA class, with both optional members, exports all five
// tables without a diagnostic.
// expect: compiles
#include <ncclnet/rma.hpp>

class GoodRma {
 public:
  static constexpr const char* kName = "good-rma";
  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<GoodRma>* out);
  ncclResult_t devices(int* ndev);
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
  ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm);
  ncclResult_t connect(const ncclnet::CommContext& ctx, void* const* handles, int nranks, int rank,
                       void* listenComm, void** collComm);
  ncclResult_t createContext(void* collComm, const ncclnet::RmaConfig& config, void** rmaCtx);
  ncclResult_t regMrSym(void* collComm, void* data, size_t size, int type, uint64_t mrFlags,
                        void** mhandle);
  ncclResult_t regMrSymDmaBuf(void* collComm, void* data, size_t size, int type, uint64_t offset,
                              int fd, uint64_t mrFlags, void** mhandle);
  ncclResult_t deregMrSym(void* collComm, void* mhandle);
  ncclResult_t destroyContext(void* rmaCtx);
  ncclResult_t closeColl(void* collComm);
  ncclResult_t closeListen(void* listenComm);
  ncclResult_t iput(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size,
                    uint64_t dstOff, void* dstMhandle, uint32_t rank, void** request);
  ncclResult_t iputSignal(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size,
                          uint64_t dstOff, void* dstMhandle, uint32_t rank,
                          const ncclnet::RmaSignal& signal, void** request);
  ncclResult_t iget(void* rmaCtx, int context, uint64_t remoteOff, void* remoteMhandle, size_t size,
                    uint64_t localOff, void* localMhandle, uint32_t rank, void** request);
  ncclResult_t iflush(void* rmaCtx, int context, void* mhandle, uint32_t rank, void** request);
  ncclResult_t test(void* collComm, void* request, int* done);
  ncclResult_t progress(void* rmaCtx);
  ncclResult_t queryLastError(void* rmaCtx, bool* hasError);
};

NCCLNET_EXPORT_RMA_PLUGIN(GoodRma)
