// SPDX-License-Identifier: Apache-2.0
// The result policy: each failure kind has the code NCCL itself uses for
// it, and the handle codec's results come from the policy.
#include "ncclnet/result_policy.hpp"

#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>

#include "ncclnet/wire_stamp.hpp"

namespace {

using ncclnet::Failure;
using ncclnet::resultOf;

constexpr Failure kAll[] = {
    Failure::kUnsupportedMemory, Failure::kBadDevice,    Failure::kPeerGone,
    Failure::kPeerMisbehaved,    Failure::kTruncated,    Failure::kExhausted,
    Failure::kBadHandle,         Failure::kOutOfMemory,  Failure::kSystemCall,
    Failure::kBadArgument,       Failure::kInvalidUsage, Failure::kInternal,
};

// The table of docs/contract.md ("Result codes"), each row as NCCL's own
// transports answer the same failure (result_policy.hpp cites where).
TEST(ResultPolicy, EachKindHasNcclsCode) {
  EXPECT_EQ(resultOf(Failure::kUnsupportedMemory), ncclInternalError);
  EXPECT_EQ(resultOf(Failure::kBadDevice), ncclInvalidArgument);
  EXPECT_EQ(resultOf(Failure::kPeerGone), ncclRemoteError);
  EXPECT_EQ(resultOf(Failure::kPeerMisbehaved), ncclRemoteError);
  EXPECT_EQ(resultOf(Failure::kTruncated), ncclInvalidUsage);
  EXPECT_EQ(resultOf(Failure::kExhausted), ncclInternalError);
  EXPECT_EQ(resultOf(Failure::kBadHandle), ncclInvalidUsage);
  EXPECT_EQ(resultOf(Failure::kOutOfMemory), ncclSystemError);
  EXPECT_EQ(resultOf(Failure::kSystemCall), ncclSystemError);
  EXPECT_EQ(resultOf(Failure::kBadArgument), ncclInvalidArgument);
  EXPECT_EQ(resultOf(Failure::kInvalidUsage), ncclInvalidUsage);
  EXPECT_EQ(resultOf(Failure::kInternal), ncclInternalError);
}

TEST(ResultPolicy, NoKindSucceedsAndEachHasItsOwnName) {
  std::set<std::string> names;
  for (Failure f : kAll) {
    EXPECT_NE(resultOf(f), ncclSuccess) << ncclnet::failureName(f);
    EXPECT_NE(resultOf(f), ncclInProgress) << ncclnet::failureName(f);
    EXPECT_EQ(ncclnet::failureName(f)[0], 'k');
    names.insert(ncclnet::failureName(f));
  }
  EXPECT_EQ(names.size(), std::size(kAll));
}

// Usable where a constant is needed: plugins may switch on it.
static_assert(resultOf(Failure::kPeerGone) == ncclRemoteError);

TEST(ResultPolicy, HandleCodecFollowsThePolicy) {
  for (auto v : {ncclnet::WireVerdict::kTruncated, ncclnet::WireVerdict::kNotOurs,
                 ncclnet::WireVerdict::kWrongVersion, ncclnet::WireVerdict::kWrongSecret,
                 ncclnet::WireVerdict::kMalformed}) {
    EXPECT_EQ(ncclnet::wireResult(v, ncclnet::WireSource::kHandle), resultOf(Failure::kBadHandle));
    EXPECT_EQ(ncclnet::wireResult(v, ncclnet::WireSource::kAnswer),
              resultOf(Failure::kPeerMisbehaved));
  }
  EXPECT_EQ(ncclnet::wireResult(ncclnet::WireVerdict::kOk, ncclnet::WireSource::kAnswer),
            ncclSuccess);
}

}  // namespace
