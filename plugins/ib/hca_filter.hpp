// SPDX-License-Identifier: Apache-2.0
// sdk-ib: NCCL_IB_HCA, with NCCL's syntax. "mlx5_0:1,mlx5_1" keeps port 1
// of devices whose names start with mlx5_0 and every port of those starting
// with mlx5_1; a leading '^' excludes instead; '=' (after any '^') makes
// names match exactly. Empty keeps everything.
#pragma once

#include <string>
#include <vector>

namespace ncclnet::ib {

class HcaFilter {
 public:
  explicit HcaFilter(const std::string& spec);
  bool keeps(const std::string& device, int port) const;

 private:
  struct Entry {
    std::string name;
    int port;  // -1: any
  };
  bool exclude_ = false;
  bool exact_ = false;
  std::vector<Entry> entries_;
};

}  // namespace ncclnet::ib
