// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the per-comm stage averages of NCCLNET_SOCKET_TIMELINE.
#include "timeline.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ncclnet::socket {

Timeline::Timeline(TimelineOptions options, const char* const (&stages)[3])
    : options_(std::move(options)),
      enabled_(options_.summary || !options_.traceDir.empty()),
      stages_{{stages[0]}, {stages[1]}, {stages[2]}} {}

void Timeline::add(int64_t postedNs, int64_t matchedNs, int64_t lastByteNs, int64_t reportedNs,
                   size_t bytes) {
  if (!enabled_) return;
  int64_t lastByte = std::max(lastByteNs, matchedNs);
  const int64_t spans[3] = {matchedNs - postedNs, lastByte - matchedNs, reportedNs - lastByte};
  for (int i = 0; i < 3; i++) {
    double us = static_cast<double>(std::max<int64_t>(spans[i], 0)) / 1000.0;
    stages_[i].sumUs += us;
    stages_[i].maxUs = std::max(stages_[i].maxUs, us);
  }
  messages_++;
  bytes_ += static_cast<double>(bytes);
  if (!options_.traceDir.empty() && traced_.size() < kMaxTraced) {
    traced_.push_back(
        Stamps{postedNs, matchedNs, lastByteNs, reportedNs, static_cast<int64_t>(bytes)});
  }
}

void Timeline::addCall(int64_t ns) {
  if (!enabled_) return;
  double us = static_cast<double>(std::max<int64_t>(ns, 0)) / 1000.0;
  calls_++;
  callSumUs_ += us;
  callMaxUs_ = std::max(callMaxUs_, us);
}

std::string Timeline::summary() const {
  double n = messages_ > 0 ? static_cast<double>(messages_) : 1.0;
  char line[512];
  int at = std::snprintf(line, sizeof(line), "%ld messages of %.0f bytes on average:", messages_,
                         bytes_ / n);
  for (int i = 0; i < 3 && at > 0 && static_cast<size_t>(at) < sizeof(line); i++) {
    at +=
        std::snprintf(line + at, sizeof(line) - static_cast<size_t>(at), "%s %s %.1f us (max %.0f)",
                      i == 0 ? "" : ",", stages_[i].name, stages_[i].sumUs / n, stages_[i].maxUs);
  }
  if (calls_ > 0 && at > 0 && static_cast<size_t>(at) < sizeof(line)) {
    std::snprintf(line + at, sizeof(line) - static_cast<size_t>(at),
                  "; %ld calls of %.1f us on average (max %.0f)", calls_,
                  callSumUs_ / static_cast<double>(calls_), callMaxUs_);
  }
  return line;
}

namespace {
int portOf(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return 0;
}

// A new file `dir/base.txt`, or `dir/base-2.txt` and so on when that exists
// (a port reused by a later comm of the process): no trace overwrites
// another. Null and *why on failure; *path names the file.
FILE* createNew(const std::string& dir, const std::string& base, std::string* path,
                std::string* why) {
  for (int n = 1; n <= 100; n++) {
    *path = dir + "/" + base + (n == 1 ? "" : "-" + std::to_string(n)) + ".txt";
    int fd = ::open(path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return fdopen(fd, "w");
    if (errno != EEXIST) break;
  }
  *why = std::strerror(errno);
  return nullptr;
}
}  // namespace

void Timeline::nameTrace(const char* kind, int controlFd) {
  if (options_.traceDir.empty()) return;
  sockaddr_storage local{}, peer{};
  socklen_t localLen = sizeof(local), peerLen = sizeof(peer);
  int localPort = getsockname(controlFd, reinterpret_cast<sockaddr*>(&local), &localLen) == 0
                      ? portOf(local)
                      : 0;
  int peerPort =
      getpeername(controlFd, reinterpret_cast<sockaddr*>(&peer), &peerLen) == 0 ? portOf(peer) : 0;
  traceName_ = "sdk-socket-" + std::to_string(getpid()) + "-" + kind + "-" +
               std::to_string(localPort) + "-" + std::to_string(peerPort);
}

void Timeline::report(const Logger& log, const std::string& what) const {
  if (messages_ == 0 && calls_ == 0) return;
  if (options_.summary) {
    NCCLNET_INFO(log, NCCL_NET, "%s: timeline: %s", what.c_str(), summary().c_str());
  }
  if (options_.traceDir.empty()) return;
  std::string path, why;
  FILE* f = createNew(options_.traceDir, traceName_, &path, &why);
  bool written = f != nullptr;
  if (written) {
    std::fprintf(f, "# postedNs matchedNs lastByteNs reportedNs bytes (%ld messages, %zu kept)\n",
                 messages_, traced_.size());
    for (const Stamps& s : traced_) {
      std::fprintf(f, "%lld %lld %lld %lld %lld\n", static_cast<long long>(s.postedNs),
                   static_cast<long long>(s.matchedNs), static_cast<long long>(s.lastByteNs),
                   static_cast<long long>(s.reportedNs), static_cast<long long>(s.bytes));
    }
    written = std::ferror(f) == 0;
    if (std::fclose(f) != 0) written = false;
    if (!written) why = "write failed";
  }
  if (written) {
    NCCLNET_INFO(log, NCCL_NET, "%s: trace of %zu messages in %s", what.c_str(), traced_.size(),
                 path.c_str());
  } else {
    NCCLNET_WARN(log, "%s: cannot write the trace file %s: %s", what.c_str(), path.c_str(),
                 why.c_str());
  }
}

}  // namespace ncclnet::socket
