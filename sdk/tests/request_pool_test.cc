// SPDX-License-Identifier: Apache-2.0
#include "ncclnet/request_pool.hpp"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace {

struct Req {
  int value = 0;
  char payload[24] = {};
};

TEST(RequestPool, HandsOutExactlyCapacityThenNull) {
  ncclnet::RequestPool<Req> pool(32);
  std::set<Req*> seen;
  for (int i = 0; i < 32; i++) {
    Req* r = pool.acquire();
    ASSERT_NE(r, nullptr) << "request " << i;
    EXPECT_TRUE(seen.insert(r).second) << "handed out twice";
  }
  EXPECT_EQ(pool.acquire(), nullptr) << "exhausted pool means back-pressure";
  EXPECT_EQ(pool.inUse(), 32u);
}

TEST(RequestPool, ReleasedRequestsComeBackValueInitialized) {
  ncclnet::RequestPool<Req> pool(1);
  Req* r = pool.acquire();
  r->value = 5;
  ASSERT_TRUE(pool.release(r));
  Req* again = pool.acquire();
  ASSERT_EQ(again, r);
  EXPECT_EQ(again->value, 0);
}

TEST(RequestPool, RejectsForeignStaleAndMisalignedPointers) {
  ncclnet::RequestPool<Req> pool(4);
  Req outside;
  Req* r = pool.acquire();
  EXPECT_FALSE(pool.release(&outside));
  EXPECT_FALSE(pool.owns(reinterpret_cast<char*>(r) + 1));
  EXPECT_FALSE(pool.release(reinterpret_cast<char*>(r) + 1));
  EXPECT_TRUE(pool.owns(r));
  EXPECT_EQ(pool.find(r), r);
  EXPECT_TRUE(pool.release(r));
  EXPECT_FALSE(pool.owns(r)) << "a released request is stale";
  EXPECT_FALSE(pool.release(r)) << "double release is refused";
  EXPECT_EQ(pool.find(r), nullptr);
}

TEST(RequestPool, ConcurrentAcquireAndReleaseLoseNothing) {
  ncclnet::RequestPool<Req> pool(64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&pool] {
      for (int i = 0; i < 5000; i++) {
        Req* r = pool.acquire();
        if (r != nullptr) {
          EXPECT_TRUE(pool.release(r));
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(pool.inUse(), 0u);
}

}  // namespace
