// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: the CUDA device peer's
// work reports in words.
#include "work_report.hpp"

#include <cinttypes>
#include <cstdio>

#include "ncclnet/abi/net_device.h"
#include "ncclnet/transport/constants.hpp"

namespace ncclnet::transport::cuda_peer {

namespace {

std::string waitText(const WorkStatus& s) {
  char text[200];
  switch (s.waitingFor) {
    case kWaitHead:
      std::snprintf(text, sizeof(text),
                    "head credit from the proxy (head %" PRId64 ", needs head + %d >= %" PRIu64 ")",
                    static_cast<int64_t>(s.seen), kSteps, s.want);
      break;
    case kWaitTail:
      std::snprintf(text, sizeof(text), "tail from the proxy (tail %" PRIu64 ", needs %" PRIu64 ")",
                    s.seen, s.want);
      break;
    case kWaitLLFlags:
      std::snprintf(text, sizeof(text),
                    "LL line flags (line %" PRIu64 " has flag 0x%" PRIx64 ", expects 0x%" PRIx64
                    ")",
                    s.line, s.seen, s.want);
      break;
    case kWaitLL128Flags:
      std::snprintf(text, sizeof(text),
                    "LL128 line flags (line %" PRIu64 " has flag %" PRIu64 ", expects %" PRIu64 ")",
                    s.line, s.seen, s.want);
      break;
    case kWaitPayload:
      std::snprintf(text, sizeof(text),
                    "LL/LL128 payload behind its flags (line %" PRIu64 ", until the tail passes)",
                    s.line);
      break;
    case kWaitEarlierWork: return "an earlier work on the same connection";
    default: return "nothing";
  }
  return text;
}

std::string what(const WorkStatus& s) {
  char text[200];
  switch (s.state) {
    case kMismatch:
      std::snprintf(text, sizeof(text),
                    "payload byte %" PRIu64 " of the slice (message byte %" PRIu64
                    ") is 0x%02x, expected 0x%02x",
                    s.badByte - s.offset, s.badByte, s.got, s.expected);
      return text;
    case kTimedOut: return "timed out waiting for " + waitText(s);
    case kBadUnpackCount:
      std::snprintf(text, sizeof(text),
                    "the UNPACK queue slot holds %" PRIu64 " entries (at most %d)", s.badByte,
                    NCCL_NET_UNPACK_MAX_SLICE_PAGES);
      return text;
    case kBadUnpackEntry:
      std::snprintf(text, sizeof(text),
                    "UNPACK entry %" PRIu64
                    " copies %u bytes to slice offset %u, past the slice's end",
                    s.badByte, s.got, s.expected);
      return text;
    case kStopped:
      if (s.waitingFor == kWaitEarlierWork)
        return "not started: an earlier work on its connection failed";
      if (s.waitingFor == kWaitNothing) return "not started: the launch was stopped";
      return "stopped while waiting for " + waitText(s);
    case kQueued: return "not started yet (behind another work on its connection)";
    case kRunning: return s.waitingFor == kWaitNothing ? "running" : "waiting for " + waitText(s);
    default: return "done";
  }
}

std::string describeWork(const WorkDesc& d, const WorkStatus& s) {
  char head[200];
  std::snprintf(head, sizeof(head),
                "%s %s work %d, slice %" PRIu64 "/%" PRIu64 " (step %" PRIu64
                ", payload offset %" PRIu64 "): ",
                d.send ? "send" : "recv", protocolName(static_cast<Protocol>(d.protocol)), d.work,
                s.slice, s.slices, s.step, s.offset);
  return head + what(s);
}

// The kernel writes with volatile stores; read each record once, whole.
WorkStatus snapshot(const WorkStatus* status, int i) {
  const volatile WorkStatus& v = status[i];
  WorkStatus s{};
  s.state = v.state;
  s.waitingFor = v.waitingFor;
  s.slice = v.slice;
  s.slices = v.slices;
  s.step = v.step;
  s.offset = v.offset;
  s.want = v.want;
  s.seen = v.seen;
  s.line = v.line;
  s.badByte = v.badByte;
  s.got = v.got;
  s.expected = v.expected;
  return s;
}

constexpr size_t kMostListed = 8;

// The first line, then up to kMostListed others that did not finish.
std::string listUnfinished(const std::vector<WorkDesc>& descs, const WorkStatus* status,
                           int first) {
  std::string out = first >= 0 ? describeWork(descs[first], snapshot(status, first)) : "";
  size_t listed = 0, more = 0;
  for (size_t i = 0; i < descs.size(); i++) {
    WorkStatus s = snapshot(status, static_cast<int>(i));
    if (static_cast<int>(i) == first || s.state == kDone) continue;
    if (listed++ == kMostListed) {
      more++;
      continue;
    }
    out += (out.empty() ? "" : "; ") + describeWork(descs[i], s);
  }
  if (more > 0) out += "; and " + std::to_string(more) + " more";
  return out;
}

}  // namespace

LaunchOutcome summarize(const std::vector<WorkDesc>& descs, const WorkStatus* status) {
  int mismatch = -1, timedOut = -1, stopped = -1;
  for (size_t i = 0; i < descs.size(); i++) {
    int state = snapshot(status, static_cast<int>(i)).state;
    int index = static_cast<int>(i);
    bool wrong = state == kMismatch || state == kBadUnpackCount || state == kBadUnpackEntry;
    if (wrong && mismatch < 0) mismatch = index;
    if (state == kTimedOut && timedOut < 0) timedOut = index;
    if (state != kDone && stopped < 0) stopped = index;
  }
  LaunchOutcome out;
  if (mismatch >= 0) {
    out.result = ncclSystemError;
    out.detail = listUnfinished(descs, status, mismatch);
  } else if (timedOut >= 0) {
    out.result = ncclTimeout;
    out.detail = listUnfinished(descs, status, timedOut);
  } else if (stopped >= 0) {
    out.result = ncclSystemError;
    out.detail = "device peer stopped: " + listUnfinished(descs, status, stopped);
  }
  return out;
}

std::string describeRunning(const std::vector<WorkDesc>& descs, const WorkStatus* status) {
  return listUnfinished(descs, status, -1);
}

}  // namespace ncclnet::transport::cuda_peer
