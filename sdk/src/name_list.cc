// SPDX-License-Identifier: Apache-2.0
// NCCL's device-name list grammar (name_list.hpp says what and why).
#include "ncclnet/name_list.hpp"

#include <cstdlib>

namespace ncclnet {

namespace {

// NCCL copies a name into `char prefix[64]`.
constexpr size_t kMaxNameLength = 63;

}  // namespace

NameList NameList::parse(std::string_view spec, size_t maxEntries) {
  NameList list;
  if (!spec.empty() && spec.front() == '^') {
    list.exclude_ = true;
    spec.remove_prefix(1);
  }
  if (!spec.empty() && spec.front() == '=') {
    list.exact_ = true;
    spec.remove_prefix(1);
  }
  while (!spec.empty() && list.entries_.size() < maxEntries) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec.remove_prefix(comma == std::string_view::npos ? spec.size() : comma + 1);
    size_t colon = item.find(':');
    std::string_view name = item.substr(0, colon);
    if (name.empty()) continue;  // ",," and ":1" name nothing
    Entry entry;
    entry.name = std::string(name.substr(0, kMaxNameLength));
    if (colon != std::string_view::npos) {
      entry.port = std::atoi(std::string(item.substr(colon + 1)).c_str());
    }
    list.entries_.push_back(std::move(entry));
  }
  return list;
}

bool NameList::keeps(std::string_view name, int port) const {
  bool listed = entries_.empty();  // no entry: every name is listed
  for (const Entry& e : entries_) {
    bool nameMatches = exact_ ? name == e.name : name.substr(0, e.name.size()) == e.name;
    if (nameMatches && (port == -1 || e.port == -1 || port == e.port)) {
      listed = true;
      break;
    }
  }
  return listed != exclude_;
}

}  // namespace ncclnet
