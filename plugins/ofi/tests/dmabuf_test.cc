// SPDX-License-Identifier: Apache-2.0
// When sdk-ofi offers DMA-BUF (dmabuf.hpp), without a provider.
#include <gtest/gtest.h>

#include <string>

#include "dmabuf.hpp"
#include "fid.hpp"

namespace ncclnet::ofi {
namespace {

bool mentions(const std::string& text, const char* word) {
  return text.find(word) != std::string::npos;
}

InfoPtr infoWithMrMode(uint64_t mrMode) {
  InfoPtr info(fi_allocinfo());
  if (info) info->domain_attr->mr_mode = static_cast<int>(mrMode);
  return info;
}

TEST(DmaBuf, NeedsLibfabric120AtBuildAndRunTime) {
  InfoPtr info = infoWithMrMode(FI_MR_HMEM);
  ASSERT_TRUE(info);
  std::string why = dmaBufUnavailable(info.get(), true, FI_VERSION(1, 17));
  ASSERT_NE(why, "");
  EXPECT_TRUE(mentions(why, "1.20")) << why;
  if (kBuiltWithDmaBuf) {
    EXPECT_TRUE(mentions(why, "loaded is 1.17")) << why;
  } else {
    EXPECT_TRUE(mentions(why, "built with libfabric")) << why;
    EXPECT_NE(dmaBufUnavailable(info.get(), true, FI_VERSION(1, 22)), "")
        << "a build without FI_MR_DMABUF never offers it, whatever runs";
  }
}

TEST(DmaBuf, NeedsHmemAndDeviceMemoryRegistration) {
  if (!kBuiltWithDmaBuf) GTEST_SKIP() << "built with libfabric headers older than 1.20";
  InfoPtr info = infoWithMrMode(FI_MR_HMEM);
  ASSERT_TRUE(info);
  EXPECT_EQ(dmaBufUnavailable(info.get(), true, kDmaBufMinVersion), "");
  EXPECT_TRUE(mentions(dmaBufUnavailable(info.get(), false, kDmaBufMinVersion), "FI_HMEM"));
  info->domain_attr->mr_mode = 0;
  EXPECT_TRUE(mentions(dmaBufUnavailable(info.get(), true, kDmaBufMinVersion), "FI_MR_HMEM"));
}

TEST(DmaBuf, ABuildWithoutFiMrDmaBufRefusesToRegister) {
  if (kBuiltWithDmaBuf) GTEST_SKIP() << "built with FI_MR_DMABUF";
  fi_mr_attr attr{};
  DmaBufRegion region{3, 0, nullptr, 4096};
  fid_mr* mr = reinterpret_cast<fid_mr*>(&attr);
  EXPECT_EQ(registerDmaBuf(nullptr, attr, region, &mr), -FI_EOPNOTSUPP);
  EXPECT_EQ(mr, nullptr);
}

}  // namespace
}  // namespace ncclnet::ofi
