// SPDX-License-Identifier: Apache-2.0
// The registration cache (registration_cache.hpp), with a fake fabric.
#include <gtest/gtest.h>

#include <vector>

#include "ncclnet/registration_cache.hpp"

namespace ncclnet {
namespace {

constexpr size_t kPage = 4096;
using MrCache = RegistrationCache<void*, NoLock>;

class RegistrationCacheTest : public ::testing::Test {
 protected:
  MrCache make(bool share) {
    return MrCache(kPage, share, [this](void*) { deregistered++; });
  }
  // The fake fabric's registration: records the range, or fails once.
  MrCache::RegisterFn reg() {
    return [this](uintptr_t* begin, uintptr_t* end, void** handle) {
      if (failNext) {
        failNext = false;
        return -12;
      }
      registered.push_back({*begin, *end - *begin});
      *handle = reinterpret_cast<void*>(registered.size());
      return 0;
    };
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

TEST_F(RegistrationCacheTest, KeysArePageAligned) {
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

TEST_F(RegistrationCacheTest, CoveredRangesShareOneRegistration) {
  MrCache cache = make(true);
  MrCache::Entry* whole = nullptr;
  MrCache::Entry* inner = nullptr;
  ASSERT_EQ(cache.acquire(page(2), 4 * kPage, reg(), &whole), 0);
  ASSERT_EQ(cache.acquire(page(3) + 100, 200, reg(), &inner), 0);
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

TEST_F(RegistrationCacheTest, PartialOverlapRegistersAgain) {
  MrCache cache = make(true);
  MrCache::Entry* first = nullptr;
  MrCache::Entry* second = nullptr;
  ASSERT_EQ(cache.acquire(page(1), kPage, reg(), &first), 0);
  ASSERT_EQ(cache.acquire(page(1), 2 * kPage, reg(), &second), 0);
  EXPECT_NE(first, second);
  EXPECT_EQ(registered.size(), 2u);
  EXPECT_EQ(cache.registrations(), 2u);
}

TEST_F(RegistrationCacheTest, LastReleaseDeregisters) {
  MrCache cache = make(true);
  MrCache::Entry* a = nullptr;
  MrCache::Entry* b = nullptr;
  ASSERT_EQ(cache.acquire(page(0), 10, reg(), &a), 0);
  ASSERT_EQ(cache.acquire(page(0) + 20, 10, reg(), &b), 0);
  EXPECT_TRUE(cache.release(a));
  EXPECT_EQ(deregistered, 0);
  EXPECT_TRUE(cache.release(b));
  EXPECT_EQ(deregistered, 1);
  EXPECT_FALSE(cache.release(a)) << "a released handle is no longer live";
  EXPECT_EQ(cache.registrations(), 0u);
}

TEST_F(RegistrationCacheTest, ForeignHandlesAreRejected) {
  MrCache cache = make(true);
  int local = 0;
  EXPECT_FALSE(cache.release(&local));
  EXPECT_FALSE(cache.release(nullptr));
  EXPECT_FALSE(cache.contains(&local));
}

TEST_F(RegistrationCacheTest, WithoutSharingEveryAcquireRegisters) {
  MrCache cache = make(false);
  MrCache::Entry* a = nullptr;
  MrCache::Entry* b = nullptr;
  ASSERT_EQ(cache.acquire(page(0), 10, reg(), &a), 0);
  ASSERT_EQ(cache.acquire(page(0), 10, reg(), &b), 0);
  EXPECT_NE(a, b);
  EXPECT_EQ(registered.size(), 2u);
  EXPECT_TRUE(cache.release(a));
  EXPECT_TRUE(cache.release(b));
  EXPECT_EQ(deregistered, 2);
}

TEST_F(RegistrationCacheTest, ProviderErrorsPassThroughAndLeaveNothing) {
  MrCache cache = make(true);
  failNext = true;
  MrCache::Entry* entry = nullptr;
  EXPECT_EQ(cache.acquire(page(0), 10, reg(), &entry), -12);
  EXPECT_EQ(cache.registrations(), 0u);
}

TEST_F(RegistrationCacheTest, EachAcquireNamesItsRegisterFunctionAndTheRegistrationIsShared) {
  MrCache cache = make(true);
  std::vector<uintptr_t> viaFd;
  auto registerFn = [&viaFd](uintptr_t* begin, uintptr_t*, void** handle) {
    viaFd.push_back(*begin);
    *handle = &viaFd;
    return 0;
  };
  MrCache::Entry* first = nullptr;
  ASSERT_EQ(cache.acquire(page(1) + 10, 2 * kPage, registerFn, &first), 0);
  ASSERT_EQ(viaFd.size(), 1u);
  EXPECT_EQ(viaFd[0], reinterpret_cast<uintptr_t>(page(1))) << "whole pages, as always";
  EXPECT_TRUE(registered.empty()) << "the other function was not called";
  MrCache::Entry* inner = nullptr;
  ASSERT_EQ(cache.acquire(page(2), 100, reg(), &inner), 0);
  EXPECT_EQ(inner, first);
  EXPECT_TRUE(registered.empty());
  EXPECT_TRUE(cache.release(inner));
  EXPECT_TRUE(cache.release(first));
  EXPECT_EQ(deregistered, 1);
}

TEST_F(RegistrationCacheTest, DestructionDeregistersWhatIsLeft) {
  {
    MrCache cache = make(true);
    MrCache::Entry* entry = nullptr;
    ASSERT_EQ(cache.acquire(page(0), 10, reg(), &entry), 0);
    ASSERT_EQ(cache.acquire(page(4), 10, reg(), &entry), 0);
  }
  EXPECT_EQ(deregistered, 2);
}

TEST_F(RegistrationCacheTest, ARegisterFunctionMayNarrowTheRange) {
  MrCache cache = make(true);
  // A dma-buf whose fd does not hold the first page: only the buffer.
  auto narrow = [](uintptr_t* begin, uintptr_t* end, void** handle) {
    *begin += 100;
    *end = *begin + 200;
    *handle = begin;
    return 0;
  };
  MrCache::Entry* entry = nullptr;
  ASSERT_EQ(cache.acquire(page(1) + 100, 200, narrow, &entry), 0);
  EXPECT_EQ(entry->begin, reinterpret_cast<uintptr_t>(page(1)) + 100);
  EXPECT_EQ(entry->end, reinterpret_cast<uintptr_t>(page(1)) + 300);
  MrCache::Entry* again = nullptr;
  ASSERT_EQ(cache.acquire(page(1) + 100, 200, reg(), &again), 0);
  EXPECT_NE(again, entry) << "a narrowed entry does not cover the page-wide request";
}

TEST_F(RegistrationCacheTest, FindsAnEntryByItsHandleWithALock) {
  RegistrationCache<void*, std::mutex> cache(kPage, true, [this](void*) { deregistered++; });
  RegistrationCache<void*, std::mutex>::Entry* entry = nullptr;
  ASSERT_EQ(cache.acquire(page(0), 10, reg(), &entry), 0);
  void* handle = entry->handle;
  EXPECT_EQ(cache.find(handle), entry);
  EXPECT_EQ(cache.find(nullptr), nullptr);
  ASSERT_EQ(cache.acquire(page(0), 10, reg(), &entry), 0);
  EXPECT_EQ(cache.refsOf(handle), 2);
  EXPECT_TRUE(cache.releaseHandle(handle));
  EXPECT_EQ(cache.refsOf(handle), 1);
  EXPECT_TRUE(cache.releaseHandle(handle));
  EXPECT_EQ(deregistered, 1);
  EXPECT_EQ(cache.find(handle), nullptr);
  EXPECT_FALSE(cache.releaseHandle(handle));
}

}  // namespace
}  // namespace ncclnet
