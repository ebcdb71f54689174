// SPDX-License-Identifier: Apache-2.0
// sdk-cnet, a plugin in C11 on <ncclnet/c/plugin_helpers.h>, loaded through
// the host Loader at v12 and at v11: what each NCCL would see of the same
// devices, converted by the C helpers in the plugin and read back by the
// SDK's v12 view.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"
#include "ncclnet/host/log_capture.hpp"
#include "plugin_paths.hpp"

namespace {

using ncclnet::host::LoadedPlugin;
using ncclnet::host::Loader;
using ncclnet::host::LoaderOptions;
using ncclnet::host::NetView;

std::unique_ptr<LoadedPlugin> loadCnet(int version) {
  LoaderOptions options;
  options.pluginList = ncclnet::testing::pluginPath("sdk-cnet");
  options.netName = "";
  options.pinnedVersion = version;
  Loader loader(options);
  std::unique_ptr<LoadedPlugin> plugin;
  EXPECT_EQ(loader.load(&plugin), ncclSuccess) << loader.report().outcome;
  return plugin;
}

ncclNetVDeviceProps_v12_t fuse(std::vector<int> devs) {
  ncclNetVDeviceProps_v12_t props{};
  props.ndevs = static_cast<int>(devs.size());
  for (size_t i = 0; i < devs.size(); i++) props.devs[i] = devs[i];
  return props;
}

TEST(CNet, LoadsAtV12AndV11) {
  for (int version : {12, 11}) {
    auto plugin = loadCnet(version);
    ASSERT_NE(plugin, nullptr);
    EXPECT_EQ(plugin->version(), version);
    EXPECT_STREQ(plugin->name(), "sdk-cnet");
    EXPECT_EQ(plugin->exportedVersions(), (std::vector<int>{12, 11}));
    EXPECT_TRUE(plugin->net().provides(ncclnet::host::Optional::MakeVDevice));
    EXPECT_FALSE(plugin->net().provides(ncclnet::host::Optional::IrecvConsumed));
  }
}

TEST(CNet, PropertiesSurviveEachVersion) {
  auto v12 = loadCnet(12);
  auto v11 = loadCnet(11);
  ASSERT_TRUE(v12 && v11);
  ncclNetProperties_v12_t seen12{}, seen11{};
  ASSERT_EQ(v12->net().getProperties(1, &seen12), ncclSuccess);
  ASSERT_EQ(v11->net().getProperties(1, &seen11), ncclSuccess);
  for (const auto* p : {&seen12, &seen11}) {
    EXPECT_STREQ(p->name, "cnet1");
    EXPECT_EQ(p->guid, 0x636e657400000001ull);
    EXPECT_EQ(p->maxRecvs, 4);
    EXPECT_EQ(p->netDeviceType, NCCL_NET_DEVICE_HOST);
    EXPECT_EQ(p->vProps.ndevs, 1);
    EXPECT_EQ(p->vProps.devs[0], 1);
    EXPECT_EQ(p->maxP2pBytes, NCCL_MAX_NET_SIZE);
    EXPECT_EQ(p->maxMultiRequestSize, 2);  // v11 has the field
  }
  // Rail and plane exist from v12 only; through v11 NCCL's default stands.
  EXPECT_EQ(seen12.railId, 1);
  EXPECT_EQ(seen12.planeId, 0);
  EXPECT_EQ(seen11.railId, NCCL_NET_ID_UNDEF);
  EXPECT_EQ(seen11.planeId, NCCL_NET_ID_UNDEF);
}

TEST(CNet, VirtualDevicesThroughEachVersion) {
  auto v12 = loadCnet(12);
  auto v11 = loadCnet(11);
  ASSERT_TRUE(v12 && v11);

  // Made through v11 (4 wide), read through both.
  ncclNetVDeviceProps_v12_t pair = fuse({1, 0});
  int viaV11 = -1;
  ASSERT_EQ(v11->net().makeVDevice(&viaV11, &pair), ncclSuccess);
  ncclNetProperties_v12_t props{};
  ASSERT_EQ(v12->net().getProperties(viaV11, &props), ncclSuccess);
  EXPECT_EQ(props.vProps.ndevs, 2);
  EXPECT_EQ(props.vProps.devs[0], 1);
  EXPECT_EQ(props.vProps.devs[1], 0);
  ASSERT_EQ(v11->net().getProperties(viaV11, &props), ncclSuccess);
  EXPECT_EQ(props.vProps.ndevs, 2);
  EXPECT_EQ(props.vProps.devs[0], 1);

  // Six NICs fit v12's array but not v11's: v12 describes the device, the
  // v11 shim refuses rather than cut the list.
  ncclNetVDeviceProps_v12_t six = fuse({0, 1, 0, 1, 0, 1});
  int wide = -1;
  ASSERT_EQ(v12->net().makeVDevice(&wide, &six), ncclSuccess);
  ASSERT_EQ(v12->net().getProperties(wide, &props), ncclSuccess);
  EXPECT_EQ(props.vProps.ndevs, 6);
  EXPECT_EQ(props.vProps.devs[5], 1);
  EXPECT_EQ(v11->net().getProperties(wide, &props), ncclInternalError);
}

}  // namespace
