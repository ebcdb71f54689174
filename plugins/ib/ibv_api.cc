// SPDX-License-Identifier: Apache-2.0
// sdk-ib: resolving the verbs entry points with libibverbs' symbol versions.
#include "ibv_api.hpp"

#include <dlfcn.h>

#include <cstring>

namespace ncclnet::ib {
namespace {

// libibverbs versions its symbols; asking for the version first picks the
// current implementation rather than an IBVERBS_1.0 compat one. A library
// without versions (a test double) is then searched unversioned.
void* symbol(void* handle, const char* name, const char* version) {
  void* sym = dlvsym(handle, name, version);
  return sym ? sym : dlsym(handle, name);
}

template <class Fn>
bool bind(void* handle, Fn* slot, const char* name, const char* version, std::string* missing) {
  *slot = reinterpret_cast<Fn>(symbol(handle, name, version));
  if (*slot == nullptr && missing != nullptr)
    *missing += std::string(missing->empty() ? "" : ", ") + name;
  return *slot != nullptr;
}

}  // namespace

bool IbvApi::load(const std::string& library, std::string* why) {
  unload();
  handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    *why = "cannot load verbs library '" + library + "': " + (err ? err : "unknown error") +
           " (install rdma-core's libibverbs, or set NCCL_IBVERBS_LIB)";
    return false;
  }
  const char* v11 = "IBVERBS_1.1";
  std::string missing;
  bind(handle, &getDeviceList, "ibv_get_device_list", v11, &missing);
  bind(handle, &freeDeviceList, "ibv_free_device_list", v11, &missing);
  bind(handle, &getDeviceName, "ibv_get_device_name", v11, &missing);
  bind(handle, &openDevice, "ibv_open_device", v11, &missing);
  bind(handle, &closeDevice, "ibv_close_device", v11, &missing);
  bind(handle, &queryDevice, "ibv_query_device", v11, &missing);
  bind(handle, &queryPortCompat, "ibv_query_port", v11, &missing);
  bind(handle, &queryGid, "ibv_query_gid", v11, &missing);
  bind(handle, &allocPd, "ibv_alloc_pd", v11, &missing);
  bind(handle, &deallocPd, "ibv_dealloc_pd", v11, &missing);
  bind(handle, &regMr, "ibv_reg_mr", v11, &missing);
  bind(handle, &deregMr, "ibv_dereg_mr", v11, &missing);
  bind(handle, &createCq, "ibv_create_cq", v11, &missing);
  bind(handle, &destroyCq, "ibv_destroy_cq", v11, &missing);
  bind(handle, &createQp, "ibv_create_qp", v11, &missing);
  bind(handle, &modifyQp, "ibv_modify_qp", v11, &missing);
  bind(handle, &destroyQp, "ibv_destroy_qp", v11, &missing);
  bind(handle, &wcStatusStr, "ibv_wc_status_str", v11, &missing);
  bind(handle, &queryGidEx, "_ibv_query_gid_ex", "IBVERBS_1.11", nullptr);   // optional
  bind(handle, &regDmabufMr, "ibv_reg_dmabuf_mr", "IBVERBS_1.12", nullptr);  // optional
  bind(handle, &regMrIova2, "ibv_reg_mr_iova2", "IBVERBS_1.8", nullptr);     // optional
  bind(handle, &getAsyncEvent, "ibv_get_async_event", v11, nullptr);         // optional
  bind(handle, &ackAsyncEvent, "ibv_ack_async_event", v11, nullptr);         // optional
  if (!missing.empty()) {
    *why = "verbs library '" + library + "' lacks " + missing;
    unload();
    return false;
  }
  path = library;
  return true;
}

void IbvApi::unload() {
  if (handle != nullptr) dlclose(handle);
  handle = nullptr;
  path.clear();
  static_cast<IbvFunctions&>(*this) = IbvFunctions{};
}

int IbvApi::queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const {
  std::memset(attr, 0, sizeof(*attr));
  verbs_context* vctx = verbs_get_ctx_op(context, query_port);
  if (vctx != nullptr) return vctx->query_port(context, port, attr, sizeof(*attr));
  return queryPortCompat(context, port, attr);
}

}  // namespace ncclnet::ib
