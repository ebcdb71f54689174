// SPDX-License-Identifier: Apache-2.0
// Names of property values, as the text and JSON reports print them.
#pragma once

#include <string>

namespace ncclnet::json {

// "HOST|CUDA" for a ptrSupport mask ("none" for 0).
std::string ptrSupportText(int mask);
// "HOST", "UNPACK", ... ("unknown" otherwise).
const char* deviceTypeName(int type);

}  // namespace ncclnet::json
