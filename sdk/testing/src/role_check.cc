// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: the message text of failed checks in a child.
#include "ncclnet/testing/role_check.hpp"

#include <cstdarg>

namespace ncclnet::testing {

std::string format(const char* fmt, ...) {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  return text;
}

}  // namespace ncclnet::testing
