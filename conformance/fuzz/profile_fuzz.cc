// SPDX-License-Identifier: Apache-2.0
// Fuzzes the YAML profile loader (a vendor's CI writes these files): the
// input is the file. A profile is either loaded or refused with one line
// that names the file; nothing escapes as an exception or a crash. What
// loads is then used as a run uses it: scenario globs, deadlines and every
// property check against a device.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "profile/profile.hpp"

using namespace conformance;

namespace {

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "profile loader: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = memfd_create("profile.yaml", MFD_CLOEXEC);
  require(fd >= 0, "memfd_create failed");
  require(::write(fd, data, size) == static_cast<ssize_t>(size), "short write");
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  Profile profile;
  std::string error;
  bool loaded = loadProfile(path, &profile, &error);
  ::close(fd);
  if (!loaded) {
    require(error.compare(0, path.size(), path) == 0, "the refusal does not name the file");
    return 0;
  }
  for (const char* scenario : {"Data.Sizes", "Connect.ManyComms", "Faults.PeerDeath"}) {
    profile.includes(scenario);
    profile.exclusionFor(scenario);
    profile.deadlineFor(scenario);
  }
  ncclNetProperties_v12_t props{};
  props.name = const_cast<char*>("fuzz0");
  props.pciPath = const_cast<char*>("/sys/devices/fuzz");
  for (const DeviceExpectation& device : profile.expect) {
    globMatch(device.match, props.name);
    for (const PropertyCheck& check : device.checks) evaluate(check, props);
  }
  return 0;
}
