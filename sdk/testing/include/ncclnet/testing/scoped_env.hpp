// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: environment variables set for one test and put
// back (value or absence) when it ends, so tests do not leak knobs into
// each other.
//
//   ncclnet::testing::ScopedEnv env;
//   env.set("NCCL_IB_MTU", "9000");
//   env.unset("NCCL_SOCKET_IFNAME");
#pragma once

#include <string>
#include <vector>

namespace ncclnet::testing {

class ScopedEnv {
 public:
  ScopedEnv() = default;
  ~ScopedEnv();  // restores in reverse order
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

  void set(const std::string& name, const std::string& value);
  void unset(const std::string& name);

 private:
  struct Saved {
    std::string name;
    bool had = false;
    std::string value;
  };
  void save(const std::string& name);
  std::vector<Saved> saved_;
};

}  // namespace ncclnet::testing
