// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: scoped environment variables.
#include "ncclnet/testing/scoped_env.hpp"

#include <cstdlib>

namespace ncclnet::testing {

void ScopedEnv::save(const std::string& name) {
  const char* old = std::getenv(name.c_str());
  saved_.push_back({name, old != nullptr, old != nullptr ? old : ""});
}

void ScopedEnv::set(const std::string& name, const std::string& value) {
  save(name);
  ::setenv(name.c_str(), value.c_str(), 1);
}

void ScopedEnv::unset(const std::string& name) {
  save(name);
  ::unsetenv(name.c_str());
}

ScopedEnv::~ScopedEnv() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    if (it->had)
      ::setenv(it->name.c_str(), it->value.c_str(), 1);
    else
      ::unsetenv(it->name.c_str());
  }
}

}  // namespace ncclnet::testing
