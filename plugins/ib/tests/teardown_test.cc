// SPDX-License-Identifier: Apache-2.0
// sdk-ib: what NCCL leaves open at finalize — comms with a receive in
// flight, registrations never deregistered, a listen, a connect halfway
// through its handshake — is closed by the SDK through the plugin, before
// the HCA contexts and the verbs library go: no line, no crash, and the
// next init drives the device as before.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "local_pair.hpp"

namespace ncclnet::ib::testing {
namespace {

class IbTeardown : public ::testing::TestWithParam<int> {};

TEST_P(IbTeardown, FinalizeClosesWhatNcclLeftOpen) {
  auto session = std::make_unique<Session>(GetParam());
  ASSERT_TRUE(session->ok()) << session->error();
  Session& s = *session;
  LocalPair pair;
  ASSERT_EQ(connectLocal(s, s, &pair), ncclSuccess);

  // Registered on both comms, never deregistered; a receive posted, never
  // tested.
  std::vector<char> sendBytes(4096), recvBytes(4096);
  void* sendMh = nullptr;
  void* recvMh = nullptr;
  ASSERT_EQ(s.net().regMr(pair.send, sendBytes.data(), sendBytes.size(), NCCL_PTR_HOST, &sendMh),
            ncclSuccess);
  ASSERT_EQ(s.net().regMr(pair.recv, recvBytes.data(), recvBytes.size(), NCCL_PTR_HOST, &recvMh),
            ncclSuccess);
  void* data = recvBytes.data();
  size_t size = recvBytes.size();
  int tag = 0;
  void* request = nullptr;
  ASSERT_EQ(s.net().irecv(pair.recv, 1, &data, &size, &tag, &recvMh, nullptr, &request),
            ncclSuccess);
  ASSERT_NE(request, nullptr);

  // A second listen, and a connect to it that cannot finish: nobody
  // accepts, so the handshake waits for the listener's answer.
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(s.net().listen(s.ctx(), 0, handle, &listen), ncclSuccess);
  void* sendComm = nullptr;
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(s.net().connect(s.ctx(), 0, handle, &sendComm, nullptr), ncclSuccess);
    ASSERT_EQ(sendComm, nullptr);
  }

  size_t mark = logMark();
  session.reset();  // finalize with all of the above still open
  std::vector<std::string> warnings = warningsSince(mark);
  EXPECT_TRUE(warnings.empty()) << warnings.front();

  // The device opens again and carries data.
  Session again(GetParam());
  ASSERT_TRUE(again.ok()) << again.error();
  LocalPair fresh;
  ASSERT_EQ(connectLocal(again, again, &fresh), ncclSuccess);
  std::string why;
  EXPECT_EQ(transfer(fresh, 1 << 20, 7, &why), ncclSuccess) << why;
  closeLocal(&fresh);
}

INSTANTIATE_TEST_SUITE_P(Abi, IbTeardown, ::testing::Values(8, 11),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "V" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace ncclnet::ib::testing
