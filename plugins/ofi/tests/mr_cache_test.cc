// SPDX-License-Identifier: Apache-2.0
// The registration cache (mr_cache.hpp), with a fake provider.
#include <gtest/gtest.h>

#include <vector>

#include "mr_cache.hpp"

namespace ncclnet::ofi {
namespace {

constexpr size_t kPage = 4096;

class MrCacheTest : public ::testing::Test {
 protected:
  MrCache make(bool share) {
    return MrCache(
        kPage, share,
        [this](void* base, size_t length, void** handle) {
          if (failNext) {
            failNext = false;
            return -12;
          }
          registered.push_back({reinterpret_cast<uintptr_t>(base), length});
          *handle = reinterpret_cast<void*>(registered.size());
          return 0;
        },
        [this](void*) { deregistered++; });
  }
  char* page(int n) { return buffer + n * kPage; }

  struct Range {
    uintptr_t base;
    size_t length;
  };
  std::vector<Range> registered;
  int deregistered = 0;
  bool failNext = false;
  alignas(4096) char buffer[16 * 4096] = {};
};

TEST_F(MrCacheTest, KeysArePageAligned) {
  uintptr_t begin, end;
  MrCache::pageRange(reinterpret_cast<void*>(4097), 10, kPage, &begin, &end);
  EXPECT_EQ(begin, 4096u);
  EXPECT_EQ(end, 8192u);
  MrCache::pageRange(reinterpret_cast<void*>(4090), 10, kPage, &begin, &end);
  EXPECT_EQ(begin, 0u);
  EXPECT_EQ(end, 8192u);
  MrCache::pageRange(reinterpret_cast<void*>(8192), 0, kPage, &begin, &end);
  EXPECT_EQ(begin, 8192u);
  EXPECT_EQ(end, 12288u) << "an empty buffer still occupies its page";
}

TEST_F(MrCacheTest, CoveredRangesShareOneRegistration) {
  MrCache cache = make(true);
  MrCache::Entry* whole = nullptr;
  MrCache::Entry* inner = nullptr;
  ASSERT_EQ(cache.acquire(page(2), 4 * kPage, &whole), 0);
  ASSERT_EQ(cache.acquire(page(3) + 100, 200, &inner), 0);
  EXPECT_EQ(whole, inner);
  EXPECT_EQ(whole->refs, 2);
  ASSERT_EQ(registered.size(), 1u);
  EXPECT_EQ(registered[0].base, reinterpret_cast<uintptr_t>(page(2)));
  EXPECT_EQ(registered[0].length, 4 * kPage);
  EXPECT_TRUE(MrCache::covers(*whole, page(3), 10));
  EXPECT_TRUE(MrCache::covers(*whole, page(5), 10));
  EXPECT_FALSE(MrCache::covers(*whole, page(6), 10));
  EXPECT_FALSE(MrCache::covers(*whole, page(1) + 4000, 100));
}

TEST_F(MrCacheTest, PartialOverlapRegistersAgain) {
  MrCache cache = make(true);
  MrCache::Entry* first = nullptr;
  MrCache::Entry* second = nullptr;
  ASSERT_EQ(cache.acquire(page(1), kPage, &first), 0);
  ASSERT_EQ(cache.acquire(page(1), 2 * kPage, &second), 0);
  EXPECT_NE(first, second);
  EXPECT_EQ(registered.size(), 2u);
  EXPECT_EQ(cache.registrations(), 2u);
}

TEST_F(MrCacheTest, LastReleaseDeregisters) {
  MrCache cache = make(true);
  MrCache::Entry* a = nullptr;
  MrCache::Entry* b = nullptr;
  ASSERT_EQ(cache.acquire(page(0), 10, &a), 0);
  ASSERT_EQ(cache.acquire(page(0) + 20, 10, &b), 0);
  EXPECT_TRUE(cache.release(a));
  EXPECT_EQ(deregistered, 0);
  EXPECT_TRUE(cache.release(b));
  EXPECT_EQ(deregistered, 1);
  EXPECT_FALSE(cache.release(a)) << "a released handle is no longer live";
  EXPECT_EQ(cache.registrations(), 0u);
}

TEST_F(MrCacheTest, ForeignHandlesAreRejected) {
  MrCache cache = make(true);
  int local = 0;
  EXPECT_FALSE(cache.release(&local));
  EXPECT_FALSE(cache.release(nullptr));
  EXPECT_FALSE(cache.contains(&local));
}

TEST_F(MrCacheTest, WithoutSharingEveryAcquireRegisters) {
  MrCache cache = make(false);
  MrCache::Entry* a = nullptr;
  MrCache::Entry* b = nullptr;
  ASSERT_EQ(cache.acquire(page(0), 10, &a), 0);
  ASSERT_EQ(cache.acquire(page(0), 10, &b), 0);
  EXPECT_NE(a, b);
  EXPECT_EQ(registered.size(), 2u);
  EXPECT_TRUE(cache.release(a));
  EXPECT_TRUE(cache.release(b));
  EXPECT_EQ(deregistered, 2);
}

TEST_F(MrCacheTest, ProviderErrorsPassThroughAndLeaveNothing) {
  MrCache cache = make(true);
  failNext = true;
  MrCache::Entry* entry = nullptr;
  EXPECT_EQ(cache.acquire(page(0), 10, &entry), -12);
  EXPECT_EQ(cache.registrations(), 0u);
}

TEST_F(MrCacheTest, AGivenRegisterFunctionMakesTheRegistrationAndItIsShared) {
  MrCache cache = make(true);
  std::vector<uintptr_t> viaFd;
  auto registerFn = [&viaFd](void* base, size_t, void** handle) {
    viaFd.push_back(reinterpret_cast<uintptr_t>(base));
    *handle = &viaFd;
    return 0;
  };
  MrCache::Entry* first = nullptr;
  ASSERT_EQ(cache.acquire(page(1) + 10, 2 * kPage, registerFn, &first), 0);
  ASSERT_EQ(viaFd.size(), 1u);
  EXPECT_EQ(viaFd[0], reinterpret_cast<uintptr_t>(page(1))) << "whole pages, as always";
  EXPECT_TRUE(registered.empty()) << "the cache's own function was not called";
  MrCache::Entry* inner = nullptr;
  ASSERT_EQ(cache.acquire(page(2), 100, &inner), 0);
  EXPECT_EQ(inner, first);
  EXPECT_TRUE(registered.empty());
  EXPECT_TRUE(cache.release(inner));
  EXPECT_TRUE(cache.release(first));
  EXPECT_EQ(deregistered, 1);
}

TEST_F(MrCacheTest, DestructionDeregistersWhatIsLeft) {
  {
    MrCache cache = make(true);
    MrCache::Entry* entry = nullptr;
    ASSERT_EQ(cache.acquire(page(0), 10, &entry), 0);
    ASSERT_EQ(cache.acquire(page(4), 10, &entry), 0);
  }
  EXPECT_EQ(deregistered, 2);
}

}  // namespace
}  // namespace ncclnet::ofi
