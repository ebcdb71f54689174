// SPDX-License-Identifier: Apache-2.0
// The Loader against NCCL's resolution rules, with fixture plugins that each
// break one rule. Tests set LD_LIBRARY_PATH to the fixture folder (CMake), so
// bare names resolve the way they would for NCCL.
#include "ncclnet/host/loader.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "ncclnet/host/log_capture.hpp"
#include "plugin_paths.hpp"

namespace {

using ncclnet::host::abiWindowForNccl;
using ncclnet::host::behaviourOf;
using ncclnet::host::findNcclRelease;
using ncclnet::host::LoadedPlugin;
using ncclnet::host::Loader;
using ncclnet::host::LoaderOptions;
using ncclnet::host::NcclBehaviour;
using ncclnet::host::PluginNameRules;
using ncclnet::testing::pluginPath;

LoaderOptions optionsFor(const std::string& pluginList) {
  LoaderOptions options;
  options.pluginList = pluginList;
  options.netName = "";
  return options;
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(LoaderEntries, UnsetMeansLibncclNet) {
  EXPECT_EQ(Loader::entriesFor(std::nullopt), (std::vector<std::string>{"libnccl-net.so"}));
}

TEST(LoaderEntries, NoneInAnyCaseMeansNoExternalPlugin) {
  EXPECT_TRUE(Loader::entriesFor(std::string("none")).empty());
  EXPECT_TRUE(Loader::entriesFor(std::string("NONE")).empty());
}

TEST(LoaderEntries, CommaListKeepsOrderSkipsEmptyAndCapsAtFourteen) {
  EXPECT_EQ(Loader::entriesFor(std::string("a,,b,c")), (std::vector<std::string>{"a", "b", "c"}));
  std::string many;
  for (int i = 0; i < 20; i++) many += "p" + std::to_string(i) + ",";
  EXPECT_EQ(Loader::entriesFor(many).size(), 14u);
  EXPECT_TRUE(Loader::entriesFor(std::string(300, 'x')).empty())
      << "names over 254 chars are skipped";
}

TEST(LoaderEntries, FilesTriedPerEntry) {
  EXPECT_EQ(Loader::filesForEntry("sdk-socket"),
            (std::vector<std::string>{"sdk-socket", "libnccl-net-sdk-socket.so"}));
  EXPECT_EQ(Loader::filesForEntry("/opt/x/libfoo.so"),
            (std::vector<std::string>{"/opt/x/libfoo.so"}));
  EXPECT_EQ(Loader::filesForEntry("libfoo.so"), (std::vector<std::string>{"libfoo.so"}));
  EXPECT_EQ(Loader::filesForEntry("STATIC_PLUGIN"), (std::vector<std::string>{""}));
  EXPECT_EQ(Loader::filesForEntry("static"), (std::vector<std::string>{""}))
      << "NCCL compares only the entry's length";
}

TEST(LoaderWindow, NcclReleasesMapToTheirNewestAbi) {
  int oldest = 0, newest = 0;
  ASSERT_TRUE(abiWindowForNccl("2.23", &oldest, &newest));
  EXPECT_EQ(newest, 8);
  EXPECT_EQ(oldest, 6);
  ASSERT_TRUE(abiWindowForNccl("2.28.9", &oldest, &newest));
  EXPECT_EQ(newest, 11);
  ASSERT_TRUE(abiWindowForNccl("2.30", &oldest, &newest));
  EXPECT_EQ(newest, 12);
  ASSERT_TRUE(abiWindowForNccl("2.19.3", &oldest, &newest));
  EXPECT_EQ(newest, 7);
  ASSERT_TRUE(abiWindowForNccl("2.26", &oldest, &newest));
  EXPECT_EQ(newest, 10);
  EXPECT_FALSE(abiWindowForNccl("2.18", &oldest, &newest));
  EXPECT_FALSE(abiWindowForNccl("banana", &oldest, &newest));
  EXPECT_FALSE(abiWindowForNccl("3.0", &oldest, &newest));
  EXPECT_FALSE(abiWindowForNccl("2.28x", &oldest, &newest));
}

TEST(LoaderWindow, UnknownReleasesAreRefusedNotGuessed) {
  int oldest = 0, newest = 0;
  EXPECT_FALSE(abiWindowForNccl("2.99", &oldest, &newest));
  EXPECT_FALSE(abiWindowForNccl("2.31", &oldest, &newest)) << "a future loader may differ";
  EXPECT_FALSE(abiWindowForNccl("2.27.4", &oldest, &newest)) << "never released";
  EXPECT_FALSE(abiWindowForNccl("2.30.7.1", &oldest, &newest));
  std::string known = ncclnet::host::knownNcclReleasesText();
  EXPECT_TRUE(contains(known, "2.19.{1,3,4}")) << known;
  EXPECT_TRUE(contains(known, "2.21.5, 2.22.3")) << known;
  EXPECT_TRUE(contains(known, "2.30.{3,4,7}")) << known;
}

TEST(LoaderWindow, MinorAloneMeansItsNewestPatch) {
  ASSERT_TRUE(findNcclRelease("2.27").has_value());
  EXPECT_EQ(findNcclRelease("2.27")->text(), "2.27.7");
  EXPECT_EQ(findNcclRelease("2.28.3")->text(), "2.28.3");
  EXPECT_EQ(findNcclRelease("2.23")->text(), "2.23.4");
}

TEST(LoaderRules, EachReleaseReadsNcclNetPluginItsOwnWay) {
  using Files = PluginNameRules::Files;
  NcclBehaviour b23 = behaviourOf(*findNcclRelease("2.23"));
  EXPECT_FALSE(b23.nameRules.splitsList);
  EXPECT_FALSE(b23.nameRules.noneDisables);
  EXPECT_FALSE(b23.nameRules.staticPlugin);
  EXPECT_TRUE(b23.nameRules.emptyIsUnset);
  EXPECT_EQ(b23.nameRules.files, Files::AsGivenThenSuffixed);
  EXPECT_TRUE(behaviourOf(*findNcclRelease("2.26.2")).nameRules.staticPlugin);
  EXPECT_FALSE(behaviourOf(*findNcclRelease("2.26.6")).nameRules.splitsList);
  NcclBehaviour b273 = behaviourOf(*findNcclRelease("2.27.3"));
  EXPECT_TRUE(b273.nameRules.splitsList);
  EXPECT_EQ(b273.nameRules.files, Files::LibNameElseSuffixed);
  NcclBehaviour b277 = behaviourOf(*findNcclRelease("2.27.7"));
  EXPECT_EQ(b277.nameRules.files, Files::AsGivenThenSuffixedIfBare);
  EXPECT_FALSE(b277.nameRules.noneDisables) << "'none' arrived in 2.28.3";
  NcclBehaviour b28 = behaviourOf(*findNcclRelease("2.28"));
  EXPECT_TRUE(b28.nameRules.noneDisables);
  EXPECT_EQ(b28.newestVersion, 11);
}

TEST(LoaderRules, BeforeTwoTwentySevenThreeTheValueIsOneName) {
  PluginNameRules old = behaviourOf(*findNcclRelease("2.23")).nameRules;
  EXPECT_EQ(Loader::entriesFor(std::string("a,b"), old), (std::vector<std::string>{"a,b"}));
  EXPECT_EQ(Loader::entriesFor(std::string("none"), old), (std::vector<std::string>{"none"}));
  EXPECT_EQ(Loader::entriesFor(std::string(""), old), (std::vector<std::string>{"libnccl-net.so"}));
  EXPECT_TRUE(Loader::entriesFor(std::string("")).empty()) << "2.27.3+: an empty list";
  EXPECT_EQ(Loader::filesForEntry("/opt/x/libfoo.so", old),
            (std::vector<std::string>{"/opt/x/libfoo.so", "libnccl-net-/opt/x/libfoo.so.so"}));
  EXPECT_EQ(Loader::filesForEntry("static", old),
            (std::vector<std::string>{"static", "libnccl-net-static.so"}));
}

TEST(LoaderRules, TwoNineteenAndTwoTwentyTryOnlyTheSuffixedName) {
  for (const char* nccl : {"2.19.1", "2.20.5"}) {
    PluginNameRules r = behaviourOf(*findNcclRelease(nccl)).nameRules;
    EXPECT_EQ(Loader::filesForEntry("sdk-socket", r),
              (std::vector<std::string>{"libnccl-net-sdk-socket.so"}))
        << nccl;
    EXPECT_EQ(Loader::filesForEntry("/opt/libx.so", r),
              (std::vector<std::string>{"libnccl-net-/opt/libx.so.so"}))
        << nccl;
  }
  EXPECT_EQ(behaviourOf(*findNcclRelease("2.21")).nameRules.files,
            PluginNameRules::Files::AsGivenThenSuffixed);
}

TEST(LoaderRules, TwoTwentySevenThreeTriesOneFilePerEntry) {
  PluginNameRules r = behaviourOf(*findNcclRelease("2.27.3")).nameRules;
  EXPECT_EQ(Loader::filesForEntry("sdk-socket", r),
            (std::vector<std::string>{"libnccl-net-sdk-socket.so"}));
  EXPECT_EQ(Loader::filesForEntry("libfoo.so", r), (std::vector<std::string>{"libfoo.so"}));
}

TEST(LoaderRules, OldNcclDoesNotSplitACommaList) {
  LoaderOptions options = optionsFor("missing-one,sdk-testnet-min");
  NcclBehaviour b = behaviourOf(*findNcclRelease("2.23"));
  options.nameRules = b.nameRules;
  options.oldestVersion = b.oldestVersion;
  options.newestVersion = b.newestVersion;
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(options);
  EXPECT_EQ(loader.load(&plugin), ncclSystemError);
  const auto& attempts = loader.report().attempts;
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].file, "missing-one,sdk-testnet-min");
  EXPECT_EQ(attempts[1].file, "libnccl-net-missing-one,sdk-testnet-min.so");
  EXPECT_EQ(loader.report().nameRules, "one name, commas included");

  Loader now(optionsFor("missing-one,sdk-testnet-min"));
  ASSERT_EQ(now.load(&plugin), ncclSuccess) << "2.27.3+ splits the list";
  EXPECT_STREQ(plugin->name(), "sdk-testnet-min");
}

TEST(LoaderRules, OldNcclTriesOnlyLibncclNetWhenUnset) {
  LoaderOptions options;
  options.pluginList = std::string("");
  options.netName = "";
  options.nameRules = behaviourOf(*findNcclRelease("2.23")).nameRules;
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(options);
  loader.load(&plugin);
  ASSERT_EQ(loader.report().attempts.size(), 1u);
  EXPECT_EQ(loader.report().attempts[0].file, "libnccl-net.so");
}

TEST(LoaderFixtures, OnlyV7IsChosenByEveryNcclThatAcceptsIt) {
  for (const char* nccl : {"2.23", "2.28", "2.30"}) {
    LoaderOptions options = optionsFor(pluginPath("fixture-only-v7"));
    ASSERT_TRUE(abiWindowForNccl(nccl, &options.oldestVersion, &options.newestVersion));
    std::unique_ptr<LoadedPlugin> plugin;
    Loader loader(options);
    ASSERT_EQ(loader.load(&plugin), ncclSuccess) << nccl << ": " << loader.report().outcome;
    EXPECT_EQ(plugin->version(), 7) << nccl;
    EXPECT_STREQ(plugin->name(), "fixture-v7");
    EXPECT_EQ(plugin->exportedVersions(), std::vector<int>{7});
    const auto& attempt = loader.report().attempts.back();
    EXPECT_TRUE(attempt.selected);
    EXPECT_EQ(attempt.devices, 1);
    ASSERT_EQ(attempt.symbols.size(), 7u);
    EXPECT_EQ(attempt.symbols[0].version, 12);
    EXPECT_FALSE(attempt.symbols[0].found);
    EXPECT_TRUE(attempt.symbols[5].found) << "v7 is the sixth probe, newest first";
  }
}

TEST(LoaderFixtures, VersionOutsideTheWindowIsExplained) {
  LoaderOptions options = optionsFor(pluginPath("fixture-only-v7"));
  options.pinnedVersion = 8;
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(options);
  EXPECT_EQ(loader.load(&plugin), ncclSystemError);
  EXPECT_EQ(plugin, nullptr);
  EXPECT_TRUE(
      contains(loader.report().attempts.back().verdict, "no version in the accepted window v8..v8"))
      << loader.report().attempts.back().verdict;
}

TEST(LoaderFixtures, MissingLibraryTriesBothNamesAndSaysWhy) {
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(optionsFor("no-such-plugin"));
  EXPECT_EQ(loader.load(&plugin), ncclSystemError);
  const auto& attempts = loader.report().attempts;
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].file, "no-such-plugin");
  EXPECT_EQ(attempts[1].file, "libnccl-net-no-such-plugin.so");
  EXPECT_FALSE(attempts[1].opened);
  EXPECT_TRUE(contains(attempts[1].error, "libnccl-net-no-such-plugin.so")) << attempts[1].error;
  EXPECT_TRUE(contains(loader.report().outcome, "fall back to its internal IB"));
}

TEST(LoaderFixtures, SuffixNameResolvesThroughTheLibraryPath) {
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(optionsFor("sdk-testnet"));
  ASSERT_EQ(loader.load(&plugin), ncclSuccess) << loader.report().outcome;
  EXPECT_EQ(plugin->version(), 12);
  EXPECT_TRUE(contains(plugin->path(), "libnccl-net-sdk-testnet.so")) << plugin->path();
}

TEST(LoaderFixtures, CommaListFallsThroughToTheFirstUsableEntry) {
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(
      optionsFor("missing-one," + pluginPath("fixture-zero-devices") + ",sdk-testnet-min"));
  ASSERT_EQ(loader.load(&plugin), ncclSuccess);
  EXPECT_STREQ(plugin->name(), "sdk-testnet-min");
  const auto& attempts = loader.report().attempts;
  ASSERT_EQ(attempts.size(), 5u);  // 2 for missing-one, 1 zero-devices, 2 for sdk-testnet-min
  EXPECT_EQ(attempts[2].verdict, "devices() reported 0 devices");
}

TEST(LoaderFixtures, NoSymbolNullNameAndUnpackV6AreRefusedWithReasons) {
  struct Case {
    const char* fixture;
    const char* reason;
  } cases[] = {
      {"fixture-no-symbol", "exports no ncclNetPlugin_v6..v12 symbol"},
      {"fixture-null-name", "has a NULL name"},
      {"fixture-unpack-v6", "UNPACK version 6, NCCL accepts only version 7"},
      {"fixture-zero-devices", "reported 0 devices"},
  };
  for (const Case& c : cases) {
    std::unique_ptr<LoadedPlugin> plugin;
    Loader loader(optionsFor(pluginPath(c.fixture)));
    EXPECT_EQ(loader.load(&plugin), ncclSystemError) << c.fixture;
    ASSERT_FALSE(loader.report().attempts.empty());
    EXPECT_TRUE(contains(loader.report().attempts.back().verdict, c.reason))
        << c.fixture << ": " << loader.report().attempts.back().verdict;
  }
}

TEST(LoaderFixtures, NcclNetSelectsByTableNameCaseInsensitively) {
  LoaderOptions options = optionsFor(pluginPath("fixture-only-v7") + ",sdk-testnet");
  options.netName = "SDK-TESTNET";
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(options);
  ASSERT_EQ(loader.load(&plugin), ncclSuccess);
  EXPECT_STREQ(plugin->name(), "sdk-testnet");
  EXPECT_TRUE(contains(loader.report().attempts[0].verdict, "does not match NCCL_NET"));
}

TEST(LoaderFixtures, NcclNetWithoutAMatchIsInvalidUsage) {
  LoaderOptions options = optionsFor("sdk-testnet");
  options.netName = "vendor-x";
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(options);
  EXPECT_EQ(loader.load(&plugin), ncclInvalidUsage);
  EXPECT_TRUE(contains(loader.report().outcome, "Failed to initialize any NET plugin"));
}

TEST(LoaderFixtures, NcclNetNamingAnInternalTransportIsNotAnError) {
  LoaderOptions options = optionsFor("sdk-testnet");
  options.netName = "socket";
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(options);
  EXPECT_EQ(loader.load(&plugin), ncclSystemError) << "no external plugin, but NCCL carries on";
  EXPECT_TRUE(contains(loader.report().outcome, "internal socket transport"))
      << loader.report().outcome;
}

TEST(LoaderFixtures, NoneLoadsNothing) {
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(optionsFor("none"));
  EXPECT_EQ(loader.load(&plugin), ncclSystemError);
  EXPECT_TRUE(loader.report().attempts.empty());
}

TEST(LoaderFixtures, StaticPluginLooksInTheProgramItself) {
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(optionsFor("STATIC_PLUGIN"));
  EXPECT_EQ(loader.load(&plugin), ncclSystemError);
  ASSERT_EQ(loader.report().attempts.size(), 1u);
  EXPECT_TRUE(loader.report().attempts[0].opened);
  EXPECT_EQ(loader.report().attempts[0].path, "(program)");
}

TEST(LoaderEnvironment, ReadsNcclNetPluginAndNcclNet) {
  setenv("NCCL_NET_PLUGIN", "sdk-testnet-min", 1);
  setenv("NCCL_NET", "sdk-testnet-min", 1);
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(LoaderOptions{});
  ncclResult_t res = loader.load(&plugin);
  unsetenv("NCCL_NET_PLUGIN");
  unsetenv("NCCL_NET");
  ASSERT_EQ(res, ncclSuccess) << loader.report().outcome;
  EXPECT_EQ(loader.report().pluginListSource, "environment");
  EXPECT_EQ(loader.report().netName, "sdk-testnet-min");
}

TEST(LoaderEnvironment, EveryStepIsLogged) {
  ncclnet::host::clearCapturedLines();
  LoaderOptions options = optionsFor("no-such-plugin");
  options.logger = ncclnet::Logger(ncclnet::host::captureLogger, "NET/Plugin", NCCL_INIT);
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(options);
  loader.load(&plugin);
  EXPECT_EQ(ncclnet::host::countCaptured(NCCL_LOG_INFO, "dlopen(no-such-plugin)"), 1);
  EXPECT_EQ(ncclnet::host::countCaptured(NCCL_LOG_INFO, "dlopen(libnccl-net-no-such-plugin.so)"),
            1);
  EXPECT_EQ(ncclnet::host::countCaptured(NCCL_LOG_INFO, "NCCL_NET_PLUGIN=no-such-plugin (option)"),
            1);
}

}  // namespace
