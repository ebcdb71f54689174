// SPDX-License-Identifier: Apache-2.0
// Test kit: a scoped variable leaves the environment as it found it.
#include "ncclnet/testing/scoped_env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace ncclnet::testing {
namespace {

TEST(ScopedEnv, RestoresValuesAndAbsence) {
  ::setenv("NCCLNET_KIT_A", "before", 1);
  ::unsetenv("NCCLNET_KIT_B");
  {
    ScopedEnv env;
    env.set("NCCLNET_KIT_A", "during");
    env.set("NCCLNET_KIT_B", "new");
    env.set("NCCLNET_KIT_B", "newer");
    EXPECT_STREQ(std::getenv("NCCLNET_KIT_A"), "during");
    EXPECT_STREQ(std::getenv("NCCLNET_KIT_B"), "newer");
  }
  EXPECT_STREQ(std::getenv("NCCLNET_KIT_A"), "before");
  EXPECT_EQ(std::getenv("NCCLNET_KIT_B"), nullptr);
  {
    ScopedEnv env;
    env.unset("NCCLNET_KIT_A");
    EXPECT_EQ(std::getenv("NCCLNET_KIT_A"), nullptr);
  }
  EXPECT_STREQ(std::getenv("NCCLNET_KIT_A"), "before");
  ::unsetenv("NCCLNET_KIT_A");
}

}  // namespace
}  // namespace ncclnet::testing
