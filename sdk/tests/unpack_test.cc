// SPDX-License-Identifier: Apache-2.0
// The receive side of an UNPACK plugin: arenas, page accounting, the
// scatter list in the layout NCCL's kernel reads, and the device handle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

#include "ncclnet/unpack.hpp"

namespace {

namespace unpack = ncclnet::unpack;
using unpack::kPageBytes;

std::shared_ptr<unpack::BouncePool> hostPool(size_t arenaBytes, int arenas) {
  std::string why;
  auto pool = unpack::BouncePool::create(unpack::hostRegions(), arenaBytes, arenas, &why);
  EXPECT_NE(pool, nullptr) << why;
  return pool;
}

TEST(UnpackPool, EachReceiverOwnsAnArenaUntilItGoes) {
  auto pool = hostPool(4 * kPageBytes, 2);
  std::string why;
  auto a = unpack::Receiver::create(pool, &why);
  auto b = unpack::Receiver::create(pool, &why);
  ASSERT_NE(a, nullptr) << why;
  ASSERT_NE(b, nullptr) << why;
  EXPECT_EQ(unpack::Receiver::create(pool, &why), nullptr);
  EXPECT_NE(why.find("every arena of the bounce pool is in use"), std::string::npos) << why;
  a.reset();
  EXPECT_NE(unpack::Receiver::create(pool, &why), nullptr) << why;
}

TEST(UnpackPool, OverFourGiBIsRefused) {
  std::string why;
  EXPECT_EQ(unpack::BouncePool::create(unpack::hostRegions(), size_t(1) << 30, 5, &why), nullptr);
  EXPECT_NE(why.find("over 4 GiB"), std::string::npos) << why;
}

TEST(UnpackReceiver, PagesAreReservedTrimmedAndReleased) {
  auto pool = hostPool(8 * kPageBytes, 2);
  std::string why;
  auto rx = unpack::Receiver::create(pool, &why);
  ASSERT_NE(rx, nullptr) << why;
  unpack::Pages first, second, third;
  ASSERT_TRUE(rx->reserve(3 * kPageBytes + 1, &first));  // 4 pages
  ASSERT_TRUE(rx->reserve(4 * kPageBytes, &second));
  EXPECT_EQ(rx->freePages(), 0u);
  EXPECT_FALSE(rx->reserve(1, &third));  // the arena is full: the caller retries
  std::set<uint32_t> all(first.begin(), first.end());
  all.insert(second.begin(), second.end());
  EXPECT_EQ(all.size(), 8u);  // no page given twice
  // A receive of 100 bytes keeps one page and gives three back.
  rx->trim(&first, 100);
  EXPECT_EQ(first.size(), 1u);
  EXPECT_EQ(rx->freePages(), 3u);
  rx->release(&first);
  rx->release(&second);
  EXPECT_EQ(rx->freePages(), 8u);
  EXPECT_TRUE(rx->reserve(0, &third));  // a 0-byte receive needs no page
  EXPECT_TRUE(third.empty());
}

TEST(UnpackReceiver, BytesLandPageByPageAndAdjacentPagesMakeOneRun) {
  auto pool = hostPool(8 * kPageBytes, 1);
  std::string why;
  auto rx = unpack::Receiver::create(pool, &why);
  ASSERT_NE(rx, nullptr) << why;
  unpack::Pages pages = {5, 6, 2};  // the order a plugin chose
  const size_t size = 2 * kPageBytes + 10;
  EXPECT_EQ(rx->hostAt(pages, 0), pool->hostBase() + 5 * kPageBytes);
  EXPECT_EQ(rx->hostAt(pages, kPageBytes + 7), pool->hostBase() + 6 * kPageBytes + 7);
  EXPECT_EQ(rx->hostAt(pages, 2 * kPageBytes + 3), pool->hostBase() + 2 * kPageBytes + 3);
  EXPECT_EQ(rx->runAt(pages, 0, size), 2 * kPageBytes);  // pages 5 and 6 follow each other
  EXPECT_EQ(rx->runAt(pages, 100, size), 2 * kPageBytes - 100);
  EXPECT_EQ(rx->runAt(pages, 2 * kPageBytes, size), 10u);
}

TEST(UnpackReceiver, ScatterListIsPublishedInTheKernelsLayout) {
  auto pool = hostPool(8 * kPageBytes, 1);
  std::string why;
  auto rx = unpack::Receiver::create(pool, &why);
  ASSERT_NE(rx, nullptr) << why;
  ncclNetDeviceHandle_v12_t handle{};
  handle.netDeviceType = NCCL_NET_DEVICE_UNPACK;
  handle.netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION;
  rx->describe(&handle);
  ASSERT_NE(handle.handle, nullptr);
  EXPECT_EQ(handle.size, sizeof(ncclNetUnpackDeviceHandle));
  EXPECT_EQ(handle.needsProxyProgress, 1);
  // Host regions: the device address is the host one, so the test reads
  // what a kernel would.
  const auto* h = static_cast<const ncclNetUnpackDeviceHandle*>(handle.handle);
  EXPECT_EQ(h->bounce_buf, static_cast<void*>(pool->hostBase()));
  EXPECT_EQ(h->head, 0u);

  unpack::Pages pages = {3, 1};
  // Receive 17 goes to slot (17 + 1) % 16 = 2: NCCL's kernel advances head
  // (from 0) before it reads a step's slot.
  rx->publish(17, pages, kPageBytes + 5);
  EXPECT_EQ(h->meta->cnt[2], 2u);
  EXPECT_EQ(h->meta->cnt[1], 0u);
  EXPECT_EQ(h->meta->mem[2][0].src_off, 3 * kPageBytes);
  EXPECT_EQ(h->meta->mem[2][0].len, kPageBytes);
  EXPECT_EQ(h->meta->mem[2][0].dst_off, 0u);
  EXPECT_EQ(h->meta->mem[2][1].src_off, 1 * kPageBytes);
  EXPECT_EQ(h->meta->mem[2][1].len, 5u);
  EXPECT_EQ(h->meta->mem[2][1].dst_off, kPageBytes);
  rx->publish(18, {}, 0);
  EXPECT_EQ(h->meta->cnt[3], 0u);
}

// Mapped regions need the CUDA driver: on the CPU stand-in (ctest's
// unpack_on_cpu_stand_in) or a GPU host.
TEST(UnpackMapped, PoolAndQueueAreMappedHostMemory) {
  const ncclnet::cuda::Driver& cu = ncclnet::cuda::Driver::get();
  if (!cu.available()) {
    const char* require = std::getenv("NCCLNET_REQUIRE_GPU");
    if (require != nullptr && std::string(require) == "1")
      FAIL() << "NCCLNET_REQUIRE_GPU=1, but the CUDA driver is " << cu.whyNot();
    GTEST_SKIP() << "no GPU: CUDA driver " << cu.whyNot();
  }
  std::string why;
  auto pool = unpack::BouncePool::create(unpack::mappedRegions(cu), 2 * kPageBytes, 2, &why);
  ASSERT_NE(pool, nullptr) << why;
  EXPECT_NE(pool->deviceBase(), 0u);
  auto rx = unpack::Receiver::create(pool, &why);
  ASSERT_NE(rx, nullptr) << why;
  unpack::Pages pages;
  ASSERT_TRUE(rx->reserve(kPageBytes, &pages));
  std::fill_n(rx->hostAt(pages, 0), kPageBytes, 'x');  // the CPU writes bounce pages
  ncclNetDeviceHandle_v12_t handle{};
  rx->describe(&handle);
  EXPECT_NE(handle.handle, nullptr);
}

}  // namespace
