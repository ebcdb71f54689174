// SPDX-License-Identifier: Apache-2.0
#include "json_text.hpp"

namespace ncclnet::json {

std::string jsonText(const Json& value) {
  // dump() writes every non-finite double as null; `replace` turns invalid
  // UTF-8 into U+FFFD where the default would throw.
  return value.dump(2, ' ', false, Json::error_handler_t::replace);
}

Json stringOrNull(const std::optional<std::string>& s) {
  return s ? Json(*s) : Json(nullptr);
}

}  // namespace ncclnet::json
