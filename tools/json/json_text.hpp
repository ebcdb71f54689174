// SPDX-License-Identifier: Apache-2.0
// The one place a report's JSON becomes text, so every tool writes the same
// dialect: two-space indentation, members in the order they were added.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ncclnet::json {

// Members keep their insertion order: a report reads top-down (tool, result,
// provenance, ...), which a sorted map would scramble.
using Json = nlohmann::ordered_json;

// `value` as indented text, without a final newline. Always valid JSON:
// bytes that are not UTF-8 (a plugin's name is whatever it returned) become
// U+FFFD, and NaN and the infinities, which JSON cannot spell, become null.
std::string jsonText(const Json& value);

// A string member, or null when there is none.
Json stringOrNull(const std::optional<std::string>& s);

}  // namespace ncclnet::json
