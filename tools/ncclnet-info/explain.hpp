// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the sentences and names both reports share, so that text
// and JSON never explain the same fact differently.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "inspection.hpp"
#include "property_text.hpp"

namespace ncclnet::info {

// "v11..v6", or "v8" for a window of one version.
std::string windowText(int oldest, int newest);

// Why each exported version other than the chosen one was passed over, in
// probing order (newest first): {version, reason}.
std::vector<std::pair<int, std::string>> skippedVersions(const host::LibraryAttempt& attempt,
                                                         int oldest, int newest);

// Why `attempt` got the version it got, e.g. "newest exported version in v11..v6".
std::string choiceText(const host::LibraryAttempt& attempt, int oldest, int newest);

// One paragraph: every library tried, what became of it, what NCCL would
// do instead, and what to check. Only meaningful when nothing loaded.
std::string failureExplanation(const Inspection& inspection);

// Property value names (tools/json owns them: the JSON reports print them too).
using json::deviceTypeName;
using json::ptrSupportText;
// "1 TiB", "512 MiB" for exact binary multiples, "" otherwise.
std::string binarySizeText(size_t bytes);

}  // namespace ncclnet::info
