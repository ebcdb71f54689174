// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: its knobs, declared once (docs/check.md lists them).
#pragma once

#include <string>

#include "ncclnet/knob.hpp"

namespace ncclnet::check {

struct Config {
  std::string plugin;  // the plugin to wrap: a name x (libnccl-net-x.so) or a path
  // A call that blocks longer than this is a violation. 1 s by default: the
  // bound ncclnet-conformance puts on listen/connect/accept (rules 21, 22,
  // conformance/src/scenario/ctx.cc), long enough for a loaded machine
  // never to trip it, short enough to catch a plugin that waits for a peer.
  int blockUs = 1000000;
  bool abortOnViolation = false;
  int hangSec = 0;       // 0: no watchdog
  std::string traceDir;  // empty: no trace
};

constexpr ncclnet::Knob<Config> kKnobs[] = {
    ncclnet::stringKnob("NCCLNET_CHECK_PLUGIN", &Config::plugin, "",
                        "the plugin to wrap: a name x (libnccl-net-x.so) or a path"),
    ncclnet::intKnob("NCCLNET_CHECK_BLOCK_US", &Config::blockUs, 1000000, 1, 2000000000,
                     "a call (listen, connect, accept, isend, irecv, test) that takes longer is "
                     "a violation, in microseconds"),
    ncclnet::flagKnob("NCCLNET_CHECK_ABORT", &Config::abortOnViolation, false,
                      "1: abort the process on the first violation"),
    ncclnet::intKnob("NCCLNET_CHECK_HANG_S", &Config::hangSec, 0, 0, 86400 * 7,
                     "a request pending longer prints every outstanding request, in seconds "
                     "(0: off); SIGUSR1 prints them again"),
    ncclnet::stringKnob("NCCLNET_CHECK_TRACE", &Config::traceDir, "",
                        "a directory: one trace file of every call per process (docs/check.md)"),
};

}  // namespace ncclnet::check
