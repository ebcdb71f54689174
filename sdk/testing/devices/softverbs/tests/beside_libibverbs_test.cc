// SPDX-License-Identifier: Apache-2.0
// sdk-ib dlopens softverbs into a process that may already hold the real
// libibverbs in its global scope (anything linking libfabric does). softverbs'
// own calls between its entry points (ibv_reg_mr → ibv_reg_mr_iova2) must
// reach softverbs, never the libibverbs loaded first: that one would be
// handed softverbs' objects and crash.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <vector>

namespace {

template <typename Fn>
Fn entry(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

TEST(SoftverbsBesideLibibverbs, OwnCallsStayInsideSoftverbs) {
  void* real = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (real == nullptr) GTEST_SKIP() << "no system libibverbs.so.1 to load first: " << dlerror();
  void* soft = dlopen(SOFTVERBS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(soft, nullptr) << dlerror();

  auto getDeviceList = entry<ibv_device** (*)(int*)>(soft, "ibv_get_device_list");
  auto freeDeviceList = entry<void (*)(ibv_device**)>(soft, "ibv_free_device_list");
  auto openDevice = entry<ibv_context* (*)(ibv_device*)>(soft, "ibv_open_device");
  auto closeDevice = entry<int (*)(ibv_context*)>(soft, "ibv_close_device");
  auto allocPd = entry<ibv_pd* (*)(ibv_context*)>(soft, "ibv_alloc_pd");
  auto deallocPd = entry<int (*)(ibv_pd*)>(soft, "ibv_dealloc_pd");
  auto regMr = entry<ibv_mr* (*)(ibv_pd*, void*, size_t, int)>(soft, "ibv_reg_mr");
  auto deregMr = entry<int (*)(ibv_mr*)>(soft, "ibv_dereg_mr");
  ASSERT_TRUE(getDeviceList && freeDeviceList && openDevice && closeDevice && allocPd &&
              deallocPd && regMr && deregMr);

  int count = 0;
  ibv_device** devices = getDeviceList(&count);
  ASSERT_NE(devices, nullptr);
  ASSERT_GT(count, 0);
  ibv_context* context = openDevice(devices[0]);
  ASSERT_NE(context, nullptr);
  ibv_pd* pd = allocPd(context);
  ASSERT_NE(pd, nullptr);
  std::vector<char> buffer(4096);
  ibv_mr* mr = regMr(pd, buffer.data(), buffer.size(), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(mr->addr, buffer.data());
  EXPECT_EQ(mr->length, buffer.size());
  EXPECT_EQ(deregMr(mr), 0);
  EXPECT_EQ(deallocPd(pd), 0);
  EXPECT_EQ(closeDevice(context), 0);
  freeDeviceList(devices);
  dlclose(soft);
  dlclose(real);
}

}  // namespace
