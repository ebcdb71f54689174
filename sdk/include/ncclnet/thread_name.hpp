// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: a name for a plugin's own threads, so that top -H, ps and
// profilers (tools/ncclnet-sampler) tell them from NCCL's threads and from
// each other. Linux keeps 15 characters.
#pragma once

#include <pthread.h>

#include <cstddef>

namespace ncclnet {

inline void nameThisThread(const char* name) {
  char truncated[16] = {};
  for (size_t i = 0; i + 1 < sizeof truncated && name[i] != '\0'; ++i) truncated[i] = name[i];
  pthread_setname_np(pthread_self(), truncated);
}

}  // namespace ncclnet
