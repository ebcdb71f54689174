// SPDX-License-Identifier: Apache-2.0
#include "net_proof.hpp"

#include <string_view>

namespace nccldriver {

namespace {

constexpr size_t kMaxWarnings = 20;

// "NET/sdk-socket/0/GDRDMA" -> network "sdk-socket"; other transports have
// no network name.
std::string networkOf(const std::string& via) {
  if (via.rfind("NET/", 0) != 0) return "";
  size_t end = via.find('/', 4);
  return via.substr(4, end == std::string::npos ? std::string::npos : end - 4);
}

// The transport of a connection line: the word after " via ", or empty
// when the line is no channel connection line.
std::string connectionTransport(const std::string& line) {
  size_t channel = line.find(" Channel ");
  if (channel == std::string::npos || line.find(" -> ", channel) == std::string::npos) return "";
  size_t via = line.find(" via ", channel);
  if (via == std::string::npos) return "";
  size_t start = via + 5;
  size_t end = line.find_first_of(" \t\r", start);
  return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The transport of a CollNet connection line ("COLLNET/sdk-socket/0"), or
// empty when the line is none.
std::string collNetTransport(const std::string& line) {
  size_t at = line.find(" CollNet ");
  if (at == std::string::npos) return "";
  size_t via = line.find(" via COLLNET/", at);
  if (via == std::string::npos) return "";
  size_t start = via + 5;
  size_t end = line.find_first_of(" \t\r", start);
  return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

bool NetProof::proven() const {
  // A job CollNet carried alone (all-reduce on CollNetChain) may open no
  // channel: NCCL connects rings and trees only for the algorithms it runs.
  bool noChannelNeeded = needCollNet && collNetConnections > 0 && connections == 0;
  bool channels = (connections > 0 || noChannelNeeded) && viaExpected == connections &&
                  elsewhere.empty() && (expected.empty() || network == expected);
  bool gin = ginRanks == ranks && (expected.empty() ? !ginPlugin.empty() : ginPlugin == expected);
  bool collNet = collNetConnections > 0 && collNetViaExpected == collNetConnections;
  return (!needChannels || channels) && (!needGin || gin) && (!needCollNet || collNet);
}

std::string NetProof::describe() const {
  std::string gin;
  if (needGin) {
    gin = std::to_string(ginRanks) + " of " + std::to_string(ranks) + " ranks' GIN through " +
          (ginPlugin.empty() ? "no plugin" : ginPlugin);
    if (!needChannels) return gin;
    gin = "; " + gin;
  }
  std::string target = expected.empty() ? "a network" : "NET/" + expected;
  std::string text = std::to_string(viaExpected) + " of " + std::to_string(connections) +
                     " channel connections via " + target;
  if (connections == 0)
    text = needCollNet && collNetConnections > 0
               ? "no channel connection (CollNet carried the job)"
               : "NCCL printed no channel connection (is NCCL_DEBUG=INFO lost?)";
  for (const auto& [via, n] : elsewhere) text += "; " + std::to_string(n) + " via " + via;
  if (!expected.empty() && network != expected)
    text += network.empty() ? "; NCCL never said which network it used"
                            : "; NCCL used network " + network;
  if (gdr) text += "; GPUDirect RDMA";
  if (needCollNet) {
    text += collNetConnections == 0
                ? "; no CollNet connection (NCCL fell back to point-to-point)"
                : "; " + std::to_string(collNetViaExpected) + " of " +
                      std::to_string(collNetConnections) + " CollNet connections via COLLNET/" +
                      (expected.empty() ? "any" : expected);
  }
  return text + gin;
}

NetProof proveNetwork(std::istream& log, const std::string& expected) {
  NetProof p;
  p.expected = expected;
  std::string line;
  while (std::getline(log, line)) {
    size_t check = line.find("NET/check rule ");
    if (check != std::string::npos) {
      size_t colon = line.find(':', check);
      bool caller =
          colon != std::string::npos && colon >= 9 && line.compare(colon - 9, 9, " (caller)") == 0;
      if (!caller)
        p.violations.push_back(line);
      else if (p.callerLines.size() < kMaxWarnings)
        p.callerLines.push_back(line);
      continue;
    }
    if (line.find("NCCL WARN") != std::string::npos && p.warnings.size() < kMaxWarnings)
      p.warnings.push_back(line);
    size_t assigned = line.find("Assigned GIN plugin ");
    if (assigned != std::string::npos) {
      size_t start = assigned + 20;
      size_t end = line.find(" to comm", start);
      p.ginPlugin = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
      p.ginRanks = 1;
      continue;
    }
    size_t using_ = line.find("Using network ");
    if (using_ != std::string::npos) {
      size_t start = using_ + 14;
      size_t end = line.find_first_of(" \t\r", start);
      p.network = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
      continue;
    }
    std::string coll = collNetTransport(line);
    if (!coll.empty()) {
      p.collNetConnections++;
      std::string net = coll.substr(8, coll.find('/', 8) - 8);  // after "COLLNET/"
      if (expected.empty() || net == expected) p.collNetViaExpected++;
      continue;
    }
    std::string via = connectionTransport(line);
    if (via.empty()) continue;
    p.connections++;
    std::string net = networkOf(via);
    bool ok = expected.empty() ? !net.empty() : net == expected;
    if (ok) {
      p.viaExpected++;
      if (via.find("/GDRDMA") != std::string::npos) p.gdr = true;
    } else {
      p.elsewhere[via]++;
    }
  }
  return p;
}

NetProof mergeProofs(const std::vector<NetProof>& ranks) {
  NetProof all;
  if (ranks.empty()) return all;
  all.expected = ranks.front().expected;
  all.network = ranks.front().network;
  all.ranks = 0;
  for (const NetProof& r : ranks) {
    if (r.network != all.network) all.network = all.network + "|" + r.network;
    all.ranks += r.ranks;
    all.ginRanks += r.ginRanks;
    if (all.ginPlugin.empty()) {
      all.ginPlugin = r.ginPlugin;
    } else if (!r.ginPlugin.empty() && r.ginPlugin != all.ginPlugin) {
      all.ginPlugin += "|" + r.ginPlugin;
    }
    all.connections += r.connections;
    all.collNetConnections += r.collNetConnections;
    all.collNetViaExpected += r.collNetViaExpected;
    all.viaExpected += r.viaExpected;
    all.gdr = all.gdr || r.gdr;
    for (const auto& [via, n] : r.elsewhere) all.elsewhere[via] += n;
    all.violations.insert(all.violations.end(), r.violations.begin(), r.violations.end());
    for (const std::string& c : r.callerLines)
      if (all.callerLines.size() < kMaxWarnings) all.callerLines.push_back(c);
    for (const std::string& w : r.warnings)
      if (all.warnings.size() < kMaxWarnings) all.warnings.push_back(w);
  }
  return all;
}

}  // namespace nccldriver
