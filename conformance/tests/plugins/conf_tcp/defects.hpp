// SPDX-License-Identifier: Apache-2.0
// The defects conf-tcp can be told to plant, chosen when it is initialized:
// CONF_TCP_DEFECT=name[,name...]. Unset or empty, conf-tcp honours every
// rule. This table is the one list of them: what each breaks and the rule
// (docs/contract.md) or the diagnosis the suite must answer it with; the
// tests' expected verdicts (conformance/tests/CMakeLists.txt) name these
// entries, and a test checks that both lists hold the same names.
#pragma once

#include <bitset>
#include <cstddef>
#include <string>

namespace conftcp {

enum class Defect : unsigned {
  IgnoresTags,
  BlocksInConnect,
  WrongSizes,
  Overrun,
  NeverCompletes,
  LeavesSentinel,
  BadProfilerEvents,
  CompletesEarly,
  ReordersSends,
  AcceptFailsOnStray,
  ResetsAtClose,
  DuplicateNames,
  BadProperty,
  HidesPeerDeath,
  HidesIdlePeerDeath,
  IgnoresUnmatchedDeath,
  IgnoresDeathOnNewSend,
  PoisonedByBadConnect,
  KeepsStaleRequest,
  OneHandshakeAtATime,
  SegfaultsOnBadMhandle,
  CorruptsAByte,
  SegfaultsInConnect,
  SegfaultsBehindAHandler,
  CrashesInInit,
  LeaksASocket,
  Noisy,
  Count,
};

struct DefectInfo {
  Defect id;
  const char* name;    // what CONF_TCP_DEFECT says
  const char* breaks;  // what the plugin does wrong
  const char* rule;    // the rule it breaks, or what must diagnose it
};

// One entry per enumerator (the static_assert below checks the count).
inline constexpr DefectInfo kDefects[] = {
    {Defect::IgnoresTags, "ignores-tags", "receives fill in arrival order, whatever the tag",
     "rule 30"},
    {Defect::BlocksInConnect, "blocks-in-connect", "connect waits until the peer has accepted",
     "rule 22"},
    {Defect::WrongSizes, "wrong-sizes", "test reports the posted size, not the size received",
     "rule 35"},
    {Defect::Overrun, "overrun", "no truncation check: a larger message is written whole",
     "rule 32"},
    {Defect::NeverCompletes, "never-completes", "receives never report completion", "rule 35"},
    {Defect::LeavesSentinel, "leaves-sentinel",
     "irecv leaves NCCL_NET_OPTIONAL_RECV_COMPLETION in *request", "rule 29"},
    {Defect::BadProfilerEvents, "bad-profiler-events",
     "calls the profiler callback with an event type NCCL does not define", "rule 41"},
    {Defect::CompletesEarly, "completes-early",
     "a receive over 64 KiB with another behind it is done before its payload is in", "rule 35"},
    {Defect::ReordersSends, "reorders-sends", "a send over 64 KiB is overtaken by the next send",
     "rule 35"},
    {Defect::AcceptFailsOnStray, "accept-fails-on-stray",
     "accept fails on a connection that is not a peer", "rule 55"},
    {Defect::ResetsAtClose, "resets-at-close",
     "closeSend resets the connection, dropping bytes of sends reported done", "rule 38"},
    {Defect::DuplicateNames, "duplicate-names", "every device has the same name", "rule 8"},
    {Defect::BadProperty, "bad-property", "claims DMA-BUF support without regMrDmaBuf", "rule 9"},
    {Defect::HidesPeerDeath, "hides-peer-death", "a closed connection looks idle", "rule 50"},
    {Defect::HidesIdlePeerDeath, "hides-idle-peer-death",
     "a connection closed between messages looks idle", "rule 50"},
    {Defect::IgnoresUnmatchedDeath, "ignores-unmatched-death",
     "a started send waits for a dead receiver", "rule 50"},
    {Defect::IgnoresDeathOnNewSend, "ignores-death-on-new-send",
     "a send posted on a failed connection waits forever", "rule 50"},
    {Defect::PoisonedByBadConnect, "poisoned-by-bad-connect",
     "one failed connect fails every later one", "rule 56"},
    {Defect::KeepsStaleRequest, "keeps-stale-request",
     "with every request in flight, *request keeps what the caller left there", "rule 45"},
    {Defect::OneHandshakeAtATime, "one-handshake-at-a-time",
     "accept takes no connection while one's hello is missing", "rule 57"},
    {Defect::SegfaultsOnBadMhandle, "segfaults-on-bad-mhandle",
     "isend dies on an mhandle regMr never returned", "rule 54 (killed by SIGSEGV)"},
    {Defect::CorruptsAByte, "corrupts-a-byte",
     "byte 1000 of every longer message arrives flipped, with the right size", "rule 35"},
    {Defect::SegfaultsInConnect, "segfaults-in-connect", "dereferences NULL in connect",
     "a crash, diagnosed"},
    {Defect::SegfaultsBehindAHandler, "segfaults-behind-a-handler",
     "dereferences NULL in connect behind a SIGSEGV handler that calls exit(1)",
     "a crash, diagnosed"},
    {Defect::CrashesInInit, "crashes-in-init", "dereferences NULL while it is initialized",
     "a crash, diagnosed"},
    {Defect::LeaksASocket, "leaks-a-socket", "closeRecv leaves its socket open",
     "rule 52 (the churn test)"},
    // Not a defect: the correct plugin, calling the host's logger and
    // profiler callback from init and every call without a NULL check, as
    // several third-party plugins do. Every host must hand it both.
    {Defect::Noisy, "noisy", "nothing: calls the host's logger and profiler unchecked",
     "none (must pass)"},
};
static_assert(sizeof(kDefects) / sizeof(kDefects[0]) == static_cast<size_t>(Defect::Count),
              "one table entry per defect");

// The set a CONF_TCP_DEFECT value names. Read once, at init; the plugin and
// its comms keep their own copy, so nothing is global.
class Defects {
 public:
  bool has(Defect d) const { return bits_.test(static_cast<size_t>(d)); }
  bool any() const { return bits_.any(); }

  // Parses "name[,name...]"; empty or NULL is the correct plugin. An unknown
  // name leaves *error saying so with every known name, and returns false.
  static bool parse(const char* text, Defects* out, std::string* error) {
    *out = Defects{};
    if (text == nullptr) return true;
    std::string list(text);
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      std::string name = list.substr(start, end - start);
      start = end + 1;
      if (name.empty()) continue;
      const DefectInfo* found = nullptr;
      for (const DefectInfo& d : kDefects) {
        if (name == d.name) found = &d;
      }
      if (found == nullptr) {
        *error = "CONF_TCP_DEFECT names '" + name + "', which is no defect of conf-tcp; known:";
        for (const DefectInfo& d : kDefects) *error += std::string(" ") + d.name;
        return false;
      }
      out->bits_.set(static_cast<size_t>(found->id));
    }
    return true;
  }

 private:
  std::bitset<static_cast<size_t>(Defect::Count)> bits_;
};

}  // namespace conftcp
