// SPDX-License-Identifier: Apache-2.0
// Collects a run's provenance (see provenance.hpp).
#include "report/provenance.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <ctime>

#include "ncclnet/host/build_info.hpp"
#include "report/sha256.hpp"

extern char** environ;

namespace conformance {

namespace {

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string hostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

}  // namespace

bool isProvenanceVariable(const std::string& name) {
  for (const char* prefix : {"NCCL_", "FI_", "NCCLNET_"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

Provenance collectProvenance(const std::string& pluginPath, const std::string& profilePath) {
  ncclnet::host::BuildInfo build = ncclnet::host::buildInfo();
  Provenance p;
  p.tool = "ncclnet-conformance";
  p.toolVersion = build.sdkVersion;
  p.gitCommit = build.gitCommit;
  p.utcTime = utcNow();
  p.host = hostName();
  p.pluginSha256 = pluginPath.empty() ? "" : sha256OfFile(pluginPath);
  p.profileSha256 = profilePath.empty() ? "" : sha256OfFile(profilePath);
  for (char** entry = environ; entry != nullptr && *entry != nullptr; entry++) {
    std::string text = *entry;
    size_t eq = text.find('=');
    if (eq == std::string::npos) continue;
    std::string name = text.substr(0, eq);
    if (isProvenanceVariable(name)) p.environment.emplace_back(name, text.substr(eq + 1));
  }
  std::sort(p.environment.begin(), p.environment.end());
  return p;
}

}  // namespace conformance
