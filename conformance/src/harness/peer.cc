// SPDX-License-Identifier: Apache-2.0
// Worker side of the control channel.
#include "harness/peer.hpp"

#include "harness/crash_report.hpp"

#include <chrono>

namespace conformance {

namespace {
// An activity is worth reporting once it lasted this long: short calls come
// and go without traffic, a stuck one is known within a fraction of a second.
constexpr double kReportAfterSec = 0.1;
}  // namespace

Peer::Peer(std::unique_ptr<Channel> channel, int rank, int nranks)
    : channel_(std::move(channel)), rank_(rank), nranks_(nranks) {
  reporter_ = std::thread([this] { reportLoop(); });
}

Peer::~Peer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  reporter_.join();
}

void Peer::reportLoop() {
  uint64_t sent = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::milliseconds(50));
    if (stopping_) break;
    if (activityGeneration_ == sent || nowSeconds() - activitySince_ < kReportAfterSec) continue;
    sent = activityGeneration_;
    std::string text = activity_;
    lock.unlock();
    channel_->send(Msg::Activity, text);
    lock.lock();
  }
}

void Peer::activity(const std::string& what) {
  crash::setActivity(what);
  std::lock_guard<std::mutex> lock(mutex_);
  activity_ = what;
  activityGeneration_++;
  activitySince_ = nowSeconds();
}

void Peer::note(const std::string& text) {
  channel_->send(Msg::Note, text);
}
void Peer::count(const std::string& name, uint64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  counters_[name] += n;
}

void Peer::sendCounters() {
  Writer body;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (counters_.empty()) return;
    body.u32(static_cast<uint32_t>(counters_.size()));
    for (const auto& [name, value] : counters_) body.str(name).u64(value);
  }
  channel_->send(Msg::Counters, body.data());
}

void Peer::expectExit() {
  channel_->send(Msg::ExpectExit);
}

void Peer::verdict(const RankResult& result, uint64_t failedAtMs) {
  channel_->send(Msg::Verdict, Writer()
                                   .u32(static_cast<uint32_t>(result.end))
                                   .u32(static_cast<uint32_t>(ruleNumber(result.rule)))
                                   .u32(result.alwaysFails)
                                   .str(result.text)
                                   .u64(failedAtMs)
                                   .data());
}

std::vector<std::string> Peer::allgather(const std::string& label, const std::string& mine,
                                         double timeoutSec) {
  activity("waiting for every rank at '" + label + "'");
  uint32_t sequence = ++sequence_;
  auto timeoutMs = static_cast<uint32_t>(timeoutSec * 1000);
  if (!channel_->send(Msg::Gather,
                      Writer().u32(sequence).u32(timeoutMs).str(label).str(mine).data())) {
    throw PeerLost{"the control channel to the coordinator is closed"};
  }
  Frame frame;
  if (!channel_->receive(&frame)) throw PeerLost{"the control channel to the coordinator closed"};
  Reader reader(frame.body);
  if (frame.type == Msg::GatherFailed) throw PeerLost{reader.str()};
  std::vector<std::string> all;
  uint32_t n = reader.u32();
  for (uint32_t i = 0; i < n && reader.ok(); i++) all.push_back(reader.str());
  if (frame.type != Msg::Gathered || !reader.ok() || all.size() != static_cast<size_t>(nranks_)) {
    throw PeerLost{"malformed reply from the coordinator at '" + label + "'"};
  }
  activity("after '" + label + "'");
  return all;
}

}  // namespace conformance
