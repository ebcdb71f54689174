// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: moves the calling process into a network namespace
// of its own with only loopback up, for programs that let made-up bytes
// choose addresses (handshake fuzzers): whatever address they invent,
// nothing outside this process's namespace is ever reached.
#pragma once

#include <string>

namespace ncclnet::testing {

// The exit status that tells CTest a test was skipped (SKIP_RETURN_CODE).
constexpr int kSkipExitCode = 77;

// True once the process is alone in a new namespace with `lo` up; false
// with the reason in *why (typically: not root, so no CAP_SYS_ADMIN). Call
// it before any thread starts: unshare moves only the calling thread.
bool enterPrivateNetwork(std::string* why);

// enterPrivateNetwork, or a line "<who>: skipped, ..." on stderr and
// exit(kSkipExitCode).
void enterPrivateNetworkOrSkip(const char* who);

}  // namespace ncclnet::testing
