// SPDX-License-Identifier: Apache-2.0
// What the exact-signature check still accepts, because the SDK calls it the
// same way: const and noexcept members, members inherited from a base, an
// overload set that holds the exact signature, a final class, and a class
// that leaves every optional member out (its slots stay NULL).
// expect: compiles
#include <ncclnet/plugin.hpp>

struct SetupBase {
  ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm);
  ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t** sendDevComm);
  ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm);
};

class VariantNet final : public SetupBase {
 public:
  static constexpr char kName[] = "variant";
  static ncclResult_t create(const ncclnet::InitArgs& args,
                             std::unique_ptr<VariantNet>* out) noexcept;
  ncclResult_t devices(int* ndev) const;
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) const noexcept;
  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle);
  ncclResult_t deregMr(void* comm, void* mhandle);
  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                     void** request) noexcept;
  ncclResult_t isend(void* sendComm, void* data, int size);  // a helper of the same name
  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void** phandles, void** request);
  ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                      void** request);
  ncclResult_t test(void* request, int* done, int* sizes);
  ncclResult_t closeSend(void* sendComm);
  ncclResult_t closeRecv(void* recvComm);
  ncclResult_t closeListen(void* listenComm);
};

NCCLNET_EXPORT_PLUGIN(VariantNet)

using VariantTables = ncclnet::detail::Tables<VariantNet>;  // the constexpr source of the tables

static_assert(VariantTables::table<12>().regMrDmaBuf == nullptr, "absent regMrDmaBuf is NULL");
static_assert(VariantTables::table<12>().getDeviceMr == nullptr, "absent getDeviceMr is NULL");
static_assert(VariantTables::table<12>().irecvConsumed == nullptr, "absent irecvConsumed is NULL");
static_assert(VariantTables::table<12>().makeVDevice == nullptr, "absent makeVDevice is NULL");
static_assert(VariantTables::table<12>().setNetAttr == nullptr, "absent setNetAttr is NULL");
