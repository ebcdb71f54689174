// SPDX-License-Identifier: Apache-2.0
// ncclResult_t from the CUDA toolkit's nccl.h against the SDK's definition
// (compiled separately in nccl_result_values.c), and nccl.h + the SDK headers
// in one translation unit (the SDK reuses nccl.h's enum then).
#include <nccl.h>

#include <gtest/gtest.h>

#include "ncclnet/abi/net.h"

extern "C" const int ncclnetSdkResultValues[];
extern "C" const int ncclnetSdkResultCount;

TEST(NcclResultAgreement, ValuesMatchTheToolkitsNcclH) {
  const int fromNccl[] = {ncclSuccess,         ncclUnhandledCudaError, ncclSystemError,
                          ncclInternalError,   ncclInvalidArgument,    ncclInvalidUsage,
                          ncclRemoteError,     ncclInProgress};
  ASSERT_EQ(ncclnetSdkResultCount, 8);
  for (int i = 0; i < 8; i++) EXPECT_EQ(ncclnetSdkResultValues[i], fromNccl[i]) << "code " << i;
  EXPECT_GE(static_cast<int>(ncclNumResults), 8);
}

TEST(NcclResultAgreement, SdkHeadersCompileAfterNcclH) {
  ncclNetProperties_v12_t props{};
  ncclResult_t res = ncclSuccess;  // nccl.h's type, used by the SDK's tables
  decltype(ncclNet_v12_t::devices) devices = nullptr;
  EXPECT_EQ(res, 0);
  EXPECT_EQ(devices, nullptr);
  EXPECT_EQ(props.speed, 0);
}
