// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: checks inside a forked child of a test, where gtest's
// assertions cannot report (the child never returns into the framework).
//
//   CHILD_CHECK(cond)      in a body returning int: prints the failed
//                          condition on stderr and returns 1 (the exit status);
//   ROLE_CHECK(cond, fmt, ...), ROLE_OK(call), ROLE_TRY(expr)
//                          in a body returning std::string (runRoles' roles):
//                          return where and what failed as that string.
#pragma once

#include <cstdio>
#include <string>

#include "ncclnet/abi/common.h"

namespace ncclnet::testing {

// printf into a std::string, for the messages below.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace ncclnet::testing

#define CHILD_CHECK(cond)                                                                   \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "child check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::fflush(stderr);                                                                  \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

#define ROLE_CHECK(cond, ...)                                                       \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      return ::ncclnet::testing::format("%s:%d: %s: ", __FILE__, __LINE__, #cond) + \
             ::ncclnet::testing::format(__VA_ARGS__);                               \
    }                                                                               \
  } while (0)

#define ROLE_OK(call)                                                                       \
  do {                                                                                      \
    ncclResult_t res_ = (call);                                                             \
    if (res_ != ncclSuccess) {                                                              \
      return ::ncclnet::testing::format("%s:%d: %s returned %d", __FILE__, __LINE__, #call, \
                                        static_cast<int>(res_));                            \
    }                                                                                       \
  } while (0)

#define ROLE_TRY(expr)              \
  do {                              \
    std::string err_ = (expr);      \
    if (!err_.empty()) return err_; \
  } while (0)
