// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: NCCL's list grammar for choosing devices by name, as in
// NCCL_SOCKET_IFNAME ("eth", "=eth0,eth1", "^docker,lo") and NCCL_IB_HCA
// ("mlx5_0:1,mlx5_1", "^=mlx5_3"). One parser, so that every plugin reads
// these variables exactly as NCCL's own transports do:
//
//   ncclnet::NameList hcas = ncclnet::NameList::parse(env, ncclnet::kMaxHcaEntries);
//   if (hcas.keeps("mlx5_0", 1)) ...
//
// NCCL's behaviour, reproduced rule by rule (src/misc/utils.cc
// parseStringList and matchIfList; their callers src/misc/socket.cc
// findInterfaces and src/transport/net_ib.cc ncclIbInit):
// - a leading '^' keeps the names that do NOT match; a '=' after it (or
//   first) matches whole names, otherwise an entry matches as a prefix;
// - entries are separated by ','; empty entries are skipped; ':' ends a
//   name, and the number after it is the entry's port (read as atoi reads
//   it: "1:2" is 1, "x" is 0); text after that up to the next ',' is
//   ignored (NCCL_IB_HCA's ":rail:plane" suffixes);
// - an entry without a port, or a lookup without one (-1: interfaces have
//   none), matches every port;
// - only the first `maxEntries` entries count (NCCL's MAX_IFS, MAX_IB_DEVS),
//   and a name is cut at 63 characters (NCCL's netIf prefix buffer);
// - with no entry every name matches, and with '^' and no entry none does
//   ("^" alone selects nothing, as in NCCL).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ncclnet {

// NCCL's limits on how many entries a list holds (src/include/socket.h
// MAX_IFS; src/transport/net_ib.cc MAX_IB_DEVS).
constexpr size_t kMaxInterfaceEntries = 16;
constexpr size_t kMaxHcaEntries = 32;

class NameList {
 public:
  struct Entry {
    std::string name;
    int port = -1;  // -1: any port
  };

  static NameList parse(std::string_view spec, size_t maxEntries);

  // Whether a device called `name` (on `port`, or -1) is selected.
  bool keeps(std::string_view name, int port = -1) const;

  bool excludes() const { return exclude_; }
  bool exact() const { return exact_; }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  bool exclude_ = false;
  bool exact_ = false;
  std::vector<Entry> entries_;
};

}  // namespace ncclnet
