// SPDX-License-Identifier: Apache-2.0
// sdk-ib tests: a send comm and a receive comm in one process (both on
// softverbs device 0, each session with its own context), messages between
// them, and the softverbs hook that raises async events under the plugin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "harness.hpp"

namespace ncclnet::ib::testing {

struct LocalPair {
  Session* sender = nullptr;
  Session* receiver = nullptr;
  void* listen = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

// listen on `receiver`, connect from `sender`, accept; both driven from
// this thread until done, failed, or `seconds` pass (ncclTimeout). Returns
// the first failure of either side.
ncclResult_t connectLocal(Session& sender, Session& receiver, LocalPair* pair, double seconds = 10);
void closeLocal(LocalPair* pair);

// One message of `size` bytes (tag 0, pattern `seed`) from pair.send to
// pair.recv, each side's buffer registered for the call; both requests
// waited for. Returns the first failure; *why says what went wrong.
ncclResult_t transfer(LocalPair& pair, size_t size, uint64_t seed, std::string* why);

// softverbs_raise_async_event in the softverbs the plugin loaded; ENOSYS
// when it cannot be found.
int raiseAsyncEvent(int type, uint32_t element);

}  // namespace ncclnet::ib::testing
