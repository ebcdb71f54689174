// SPDX-License-Identifier: Apache-2.0
// Test harness for the reference transport.
#include "harness.hpp"

namespace ncclnet::transport::testing {

ncclResult_t loadPlugin(const std::string& path, std::unique_ptr<host::LoadedPlugin>* out,
                        std::string* why) {
  host::LoaderOptions options;
  options.pluginList = path;
  options.netName = std::string();
  host::Loader loader(options);
  ncclResult_t res = loader.load(out);
  if (res != ncclSuccess && why) *why = loader.report().outcome;
  return res;
}

ncclResult_t makeHostRank(host::NetView& net, const TransportConfig& config, uint64_t commId,
                          Rank* out) {
  RankOptions options;
  options.transport.config = config;
  options.transport.commId = commId;
  return makeRank(net, std::move(options), out);
}

ncclResult_t makeLink(Rank& from, Rank& to, ConnectionSpec sendSpec, ConnectionSpec recvSpec,
                      Link* out, std::string* why) {
  NetHandle handle;
  ncclResult_t res = to.transport->recvSetup(recvSpec, &handle, &out->recv);
  if (res != ncclSuccess) return *why = "recvSetup failed", res;
  res = from.transport->sendSetup(sendSpec, &out->send);
  if (res != ncclSuccess) return *why = "sendSetup failed", res;
  out->sender = sendSpec.tpRank;
  out->receiver = recvSpec.tpRank;
  out->channel = sendSpec.channelId;
  return connectAll({{out->send.get(), &handle}}, {out->recv.get()}, kTimeout, why);
}

Transfer transferOn(Rank& from, Rank& to, Link& link, size_t nbytes, uint64_t seed) {
  return Transfer{.sendRank = &from,
                  .send = link.send.get(),
                  .recvRank = &to,
                  .recv = link.recv.get(),
                  .nbytes = nbytes,
                  .seed = seed};
}

}  // namespace ncclnet::transport::testing
