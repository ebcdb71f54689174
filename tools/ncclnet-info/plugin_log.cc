// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: reading the knobs out of a plugin's NCCL_ENV lines.
#include "plugin_log.hpp"

#include <algorithm>
#include <cstring>

namespace ncclnet::info {

std::optional<Param> parseParamLine(const std::string& text) {
  // "param " starts the text or follows the log prefix and a space.
  size_t start = text.compare(0, 6, "param ") == 0 ? 0 : text.find(" param ");
  if (start == std::string::npos) return std::nullopt;
  if (start != 0) start += 1;
  size_t nameBegin = start + 6;
  size_t eq = text.find('=', nameBegin);
  size_t open = text.find(" (default ", eq == std::string::npos ? nameBegin : eq);
  if (eq == std::string::npos || open == std::string::npos || eq == nameBegin) return std::nullopt;
  size_t defaultBegin = open + std::strlen(" (default ");
  Param p;
  size_t from = text.find(", from env): ", defaultBegin);
  p.source = "env";
  if (from == std::string::npos) {
    from = text.find(", from default): ", defaultBegin);
    p.source = "default";
  }
  if (from == std::string::npos) return std::nullopt;
  size_t helpBegin = from + std::strlen(", from ") + p.source.size() + std::strlen("): ");
  p.name = text.substr(nameBegin, eq - nameBegin);
  p.value = text.substr(eq + 1, open - eq - 1);
  p.defaultValue = text.substr(defaultBegin, from - defaultBegin);
  p.help = text.substr(helpBegin);
  return p;
}

void sortCapturedLines(std::vector<LogLine> lines, Inspection* inspection) {
  const std::string loaderPrefix = std::string(kLoaderLogPrefix) + " ";
  for (LogLine& line : lines) {
    if (line.text.compare(0, loaderPrefix.size(), loaderPrefix) == 0) continue;
    if (line.flags & NCCL_ENV) {
      if (std::optional<Param> p = parseParamLine(line.text)) {
        bool replaced = false;
        for (Param& known : inspection->params) {
          if (known.name == p->name) {
            known = *p;
            replaced = true;
          }
        }
        if (!replaced) inspection->params.push_back(std::move(*p));
      } else if (std::find(inspection->envLines.begin(), inspection->envLines.end(), line.text) ==
                 inspection->envLines.end()) {
        inspection->envLines.push_back(line.text);  // once, though the plugin was set up twice
      }
    }
    inspection->pluginLog.push_back(std::move(line));
  }
}

}  // namespace ncclnet::info
