// SPDX-License-Identifier: Apache-2.0
// Where a certificate came from: which tool build judged which plugin file,
// with which profile and environment, on which host and when. Two reports
// can be compared only when these say what differs.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace conformance {

struct Provenance {
  std::string tool;           // "ncclnet-conformance"
  std::string toolVersion;    // the SDK release the tool was built from
  std::string gitCommit;      // the tool's source commit ("unknown" outside git)
  std::string utcTime;        // when the run started, ISO 8601 UTC
  std::string host;           // the host that ran rank 0
  std::string pluginSha256;   // of the plugin file that was loaded ("" if unreadable)
  std::string profileSha256;  // of the profile file's bytes ("" without a profile)
  // NCCL_*, FI_* and NCCLNET_* as the ranks saw them (the profile's env
  // applied), sorted by name.
  std::vector<std::pair<std::string, std::string>> environment;
};

// Reads the clock, the host name and the environment now; hashes the files.
Provenance collectProvenance(const std::string& pluginPath, const std::string& profilePath);

// The environment variables that change a plugin's or the suite's behaviour.
bool isProvenanceVariable(const std::string& name);

}  // namespace conformance
