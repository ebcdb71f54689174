// SPDX-License-Identifier: Apache-2.0
// Many registrations on one comm, then every one of them deregistered.
#include "scenario/registrations.hpp"

#include <algorithm>
#include <random>
#include <vector>

namespace conformance {

void registerThenDeregister(Ctx& c, void* comm, int count, const std::function<void*(int)>& regOne,
                            std::optional<uint32_t> shuffleSeed) {
  std::vector<void*> handles;
  handles.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; i++) handles.push_back(regOne(i));
  if (shuffleSeed) std::shuffle(handles.begin(), handles.end(), std::mt19937(*shuffleSeed));
  for (void* mh : handles) c.dereg(comm, mh);
}

}  // namespace conformance
