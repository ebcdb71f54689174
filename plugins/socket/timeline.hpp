// SPDX-License-Identifier: Apache-2.0
// sdk-socket: where a comm's messages spend their time
// (NCCLNET_SOCKET_TIMELINE=1). Each message passes three stages: posted ->
// matched (its peer's clear-to-send, or its header, arrived), matched -> its
// last byte moved, last byte -> the test() that reported it done. The comm
// sums them and logs the averages when it closes, which shows whether a
// slow run waits on the peer, on the sockets, or on NCCL's progress thread.
// It also sums the time NCCL's thread spent inside the comm's calls (isend,
// irecv, test): that thread serves every comm of the process, so a call
// that blocks delays all of them. With NCCLNET_SOCKET_TRACE_DIR it keeps
// every message's stamps and writes them to a file at close
// (scripts/socket_trace.py pairs the two ends of each connection).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ncclnet/log.hpp"

namespace ncclnet::socket {

inline int64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A request's byte ranges still moving, and when that count last reached
// zero. Helper threads finish ranges; the comm reads both under its lock.
// Copying (the request pool reuses slots) starts a fresh count.
struct Pending {
  std::atomic<int> count{0};
  std::atomic<int64_t> drainedAtNs{0};

  Pending() = default;
  Pending(const Pending&) {}
  Pending& operator=(const Pending&) {
    count.store(0, std::memory_order_relaxed);
    drainedAtNs.store(0, std::memory_order_relaxed);
    return *this;
  }

  void add(int ranges) { count.fetch_add(ranges, std::memory_order_acq_rel); }
  // Every finished range stamps before it counts down, so the stamp of the
  // last one is visible to whoever sees the count reach zero, and the count
  // is the helper's last touch of a request its owner may then free. One
  // clock read per range, whether or not a timeline is kept: cheaper than
  // telling every helper thread whether to stamp.
  void finishOne() {
    drainedAtNs.store(steadyNowNs(), std::memory_order_relaxed);
    count.fetch_sub(1, std::memory_order_acq_rel);
  }
  bool drained() const { return count.load(std::memory_order_acquire) == 0; }
};

// What NCCLNET_SOCKET_TIMELINE and NCCLNET_SOCKET_TRACE_DIR ask of a comm.
struct TimelineOptions {
  bool summary = false;  // one line of stage averages at close
  std::string traceDir;  // non-empty: every message's stamps, written there at close
};

class Timeline {
 public:
  // At most this many messages per comm are kept for the trace file (40
  // bytes each); later ones still count in the averages.
  static constexpr size_t kMaxTraced = size_t(1) << 20;

  // `stages` names the three stages in log order.
  Timeline(TimelineOptions options, const char* const (&stages)[3]);

  bool enabled() const { return enabled_; }
  // One message done; stamps in steady-clock ns. A message with no ranges
  // to move (inline, empty, refused) has lastByteNs 0: its bytes went with
  // the match.
  void add(int64_t postedNs, int64_t matchedNs, int64_t lastByteNs, int64_t reportedNs,
           size_t bytes);
  // One call into the comm (isend, irecv or test) took `ns`.
  void addCall(int64_t ns);
  long messages() const { return messages_; }
  // "N messages of B bytes on average: <stage> A us (max M), ...; C calls
  // of A us on average (max M)"
  std::string summary() const;
  // Names the trace file after the comm's direction ("send" or "recv") and
  // its control socket's ports (the peer's file has them swapped). Called
  // when the comm is made: at close a dead peer's socket has no peer port.
  void nameTrace(const char* kind, int controlFd);
  // At close: logs the summary line and writes the trace file, as asked.
  void report(const Logger& log, const std::string& what) const;

 private:
  struct Stage {
    const char* name;
    double sumUs = 0;
    double maxUs = 0;
  };
  struct Stamps {
    int64_t postedNs, matchedNs, lastByteNs, reportedNs, bytes;
  };
  TimelineOptions options_;
  bool enabled_;
  long messages_ = 0;
  std::vector<Stamps> traced_;
  std::string traceName_;  // "sdk-socket-<pid>-<kind>-<local port>-<peer port>"
  double bytes_ = 0;
  Stage stages_[3];
  long calls_ = 0;
  double callSumUs_ = 0;
  double callMaxUs_ = 0;
};

// Times one call into a comm for its timeline, from construction to the end
// of the scope; declare it after the comm's lock, so that the sums are only
// touched under it.
class CallClock {
 public:
  explicit CallClock(Timeline& timeline)
      : timeline_(timeline), startNs_(timeline.enabled() ? steadyNowNs() : 0) {}
  ~CallClock() {
    if (timeline_.enabled()) timeline_.addCall(steadyNowNs() - startNs_);
  }
  CallClock(const CallClock&) = delete;
  CallClock& operator=(const CallClock&) = delete;

 private:
  Timeline& timeline_;
  int64_t startNs_;
};

}  // namespace ncclnet::socket
