// SPDX-License-Identifier: Apache-2.0
// sdk-ib dlopens and dlcloses softverbs like any verbs library: the CUDA
// driver object softverbs opened must go with it (its own DriverSlot,
// ncclnet/cuda_driver_slot.hpp). Counted through libcuda's dlcloses
// (cuda_close_counter.hpp), on the CPU stand-in for the driver.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <string>

#include "cuda_close_counter.hpp"

namespace {

using cuda_close_counter::closes;

TEST(SoftverbsDriverRelease, DriverGoesWhenTheLibraryIsUnloaded) {
  std::string why;
  ASSERT_TRUE(cuda_close_counter::watch(&why)) << why;
  void* library = dlopen(SOFTVERBS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  // sdk-ib's DMA-BUF probe: with a usable driver softverbs answers EBADF
  // for fd -1, which takes it opening its driver.
  using RegDmabufMr = ibv_mr* (*)(ibv_pd*, uint64_t, size_t, uint64_t, int, int);
  auto regDmabufMr = reinterpret_cast<RegDmabufMr>(dlsym(library, "ibv_reg_dmabuf_mr"));
  ASSERT_NE(regDmabufMr, nullptr);
  errno = 0;
  EXPECT_EQ(regDmabufMr(nullptr, 0, 0, 0, -1, 0), nullptr);
  EXPECT_EQ(errno, EBADF) << "softverbs found no usable driver";
  // softverbs first asks whether the process has loaded libcuda (a dlopen
  // with RTLD_NOLOAD, closed at once): not its driver object's release.
  const int asked = closes();
  ASSERT_EQ(cuda_close_counter::realDlclose(library), 0);
  EXPECT_EQ(dlopen(SOFTVERBS_LIBRARY, RTLD_NOW | RTLD_NOLOAD), nullptr)
      << "softverbs stayed loaded, so nothing of it was released";
  EXPECT_EQ(closes(), asked + 1);
}

}  // namespace
