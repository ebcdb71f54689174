// SPDX-License-Identifier: Apache-2.0
// ncclnet::resultName against the values the SDK's ABI header gives NCCL's
// result codes (nccl_result_values.c, itself checked against nccl.h).
#include "ncclnet/result_name.hpp"

#include <gtest/gtest.h>

extern "C" const int ncclnetSdkResultValues[];
extern "C" const int ncclnetSdkResultCount;

namespace {

TEST(ResultName, NamesEveryCodeAPluginCanReturn) {
  // In nccl.h's order, which is the order of nccl_result_values.c.
  const char* expected[] = {"ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
                            "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                            "ncclRemoteError",   "ncclInProgress"};
  ASSERT_EQ(ncclnetSdkResultCount, 8);
  for (int i = 0; i < ncclnetSdkResultCount; i++) {
    EXPECT_STREQ(ncclnet::resultName(static_cast<ncclResult_t>(ncclnetSdkResultValues[i])),
                 expected[i])
        << "value " << ncclnetSdkResultValues[i];
  }
  EXPECT_STREQ(ncclnet::resultName(ncclTimeout), "ncclTimeout");
}

TEST(ResultName, TextCarriesNameAndNumber) {
  EXPECT_EQ(ncclnet::resultText(ncclSystemError), "ncclSystemError (2)");
  EXPECT_EQ(ncclnet::resultText(ncclInvalidUsage), "ncclInvalidUsage (5)");
}

TEST(ResultName, ValueNcclDoesNotDefineIsUnknownNotACrash) {
  EXPECT_STREQ(ncclnet::resultName(static_cast<ncclResult_t>(42)), "unknown ncclResult_t");
  EXPECT_EQ(ncclnet::resultText(static_cast<ncclResult_t>(-1)), "unknown ncclResult_t (-1)");
  EXPECT_STREQ(ncclnet::resultName(ncclNumResults), "unknown ncclResult_t");
}

}  // namespace
