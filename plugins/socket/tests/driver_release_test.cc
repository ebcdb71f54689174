// SPDX-License-Identifier: Apache-2.0
// NCCL may dlclose a plugin; the CUDA driver object the plugin opened must
// go with it (ncclnet/cuda_driver_slot.hpp), not stay behind, with its
// reference on libcuda, at every unload. Counted through libcuda's
// dlcloses (cuda_close_counter.hpp), on the CPU stand-in for the driver.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <memory>
#include <string>

#include "cuda_close_counter.hpp"
#include "ncclnet/abi/net.h"
#include "ncclnet/cuda_driver.hpp"
#include "ncclnet/cuda_driver_slot.hpp"

namespace {

using cuda_close_counter::closes;

void quietLogger(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

class DriverRelease : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_close_counter::watch(&why)) GTEST_FAIL() << why;
  }
};

TEST_F(DriverRelease, SlotReleasesItsDriverWhenItGoes) {
  {
    ncclnet::cuda::DriverSlot slot;
    std::shared_ptr<const ncclnet::cuda::Driver> driver = slot.get();
    ASSERT_NE(driver, nullptr);
    EXPECT_TRUE(driver->available()) << driver->whyNot();
    EXPECT_EQ(slot.get(), driver);  // opened once
  }
  EXPECT_EQ(closes(), 1);
}

TEST_F(DriverRelease, HolderKeepsTheDriverPastItsSlot) {
  std::shared_ptr<const ncclnet::cuda::Driver> held;
  {
    ncclnet::cuda::DriverSlot slot;
    held = slot.get();
  }
  EXPECT_EQ(closes(), 0);
  EXPECT_TRUE(held->available());
  held.reset();
  EXPECT_EQ(closes(), 1);
}

// sdk-socket opens the driver at init in UNPACK mode; NCCL then unloads it.
TEST_F(DriverRelease, SocketUnpackReleasesItsDriverAtUnload) {
  setenv("NCCLNET_SOCKET_UNPACK", "1", 1);
  setenv("NCCL_PROTO", "Simple", 1);
  setenv("NCCL_PAT_ENABLE", "0", 1);
  void* library = dlopen(SDK_SOCKET_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto* net = static_cast<ncclNet_v12_t*>(dlsym(library, "ncclNetPlugin_v12"));
  ASSERT_NE(net, nullptr);
  void* ctx = nullptr;
  ncclNetCommConfig_v12_t config{};
  ASSERT_EQ(net->init(&ctx, 1, &config, quietLogger, nullptr), ncclSuccess);
  ncclNetProperties_v12_t props{};
  ASSERT_EQ(net->getProperties(0, &props), ncclSuccess);
  // UNPACK offered: the plugin opened the driver and found it usable.
  EXPECT_EQ(props.netDeviceType, NCCL_NET_DEVICE_UNPACK);
  EXPECT_EQ(net->finalize(ctx), ncclSuccess);
  EXPECT_EQ(closes(), 0);  // the plugin still holds it
  ASSERT_EQ(cuda_close_counter::realDlclose(library), 0);
  EXPECT_EQ(dlopen(SDK_SOCKET_PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD), nullptr)
      << "the plugin stayed loaded, so nothing of it was released";
  EXPECT_EQ(closes(), 1);
  unsetenv("NCCLNET_SOCKET_UNPACK");
  unsetenv("NCCL_PROTO");
  unsetenv("NCCL_PAT_ENABLE");
}

}  // namespace
