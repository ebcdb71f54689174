// SPDX-License-Identifier: Apache-2.0
// sdk-ib: parsing and applying NCCL_IB_HCA.
#include "hca_filter.hpp"

#include <cstdlib>
#include <sstream>

namespace ncclnet::ib {

HcaFilter::HcaFilter(const std::string& spec) {
  size_t pos = 0;
  if (pos < spec.size() && spec[pos] == '^') {
    exclude_ = true;
    pos++;
  }
  if (pos < spec.size() && spec[pos] == '=') {
    exact_ = true;
    pos++;
  }
  std::stringstream list(spec.substr(pos));
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item.empty()) continue;
    Entry e{item, -1};
    size_t colon = item.find(':');
    if (colon != std::string::npos) {
      e.name = item.substr(0, colon);
      // "dev:port[:rail[:plane]]": rails and planes do not filter.
      e.port = std::atoi(item.c_str() + colon + 1);
    }
    entries_.push_back(e);
  }
}

bool HcaFilter::keeps(const std::string& device, int port) const {
  if (entries_.empty()) return true;
  bool matched = false;
  for (const Entry& e : entries_) {
    bool name = exact_ ? device == e.name : device.compare(0, e.name.size(), e.name) == 0;
    if (name && (e.port < 0 || e.port == port)) {
      matched = true;
      break;
    }
  }
  return exclude_ ? !matched : matched;
}

}  // namespace ncclnet::ib
