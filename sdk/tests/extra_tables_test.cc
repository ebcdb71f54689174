// SPDX-License-Identifier: Apache-2.0
// Which GIN, RMA and CollNet table each NCCL release takes from a net
// plugin's library (extra_tables.hpp), against what the releases' loaders
// do (docs/gin-rma.md).
#include "ncclnet/host/extra_tables.hpp"

#include <gtest/gtest.h>

#include <set>

namespace {

using ncclnet::host::extraTableSearches;
using ncclnet::host::extraTablesTaken;
using ncclnet::host::findNcclRelease;
using ncclnet::host::TableChoice;
using ncclnet::host::TableFamily;

// The symbol each family takes from a library exporting `exported`.
std::string taken(const char* release, TableFamily family, std::set<std::string> exported) {
  auto r = findNcclRelease(release);
  EXPECT_TRUE(r.has_value()) << release;
  for (const TableChoice& c :
       extraTablesTaken(*r, [&](const std::string& s) { return exported.count(s) > 0; })) {
    if (c.family == family) return c.symbol;
  }
  return "(family missing)";
}

TEST(ExtraTables, GinAppearsIn2287AndOnlyV11UntilTheGinLoader) {
  std::set<std::string> all = {"ncclGinPlugin_v11", "ncclGinPlugin_v12", "ncclGinPlugin_v13",
                               "ncclGinPlugin_v14"};
  EXPECT_EQ(taken("2.28.3", TableFamily::Gin, all), "");
  EXPECT_EQ(taken("2.28.9", TableFamily::Gin, all), "ncclGinPlugin_v11");
  EXPECT_EQ(taken("2.29.3", TableFamily::Gin, all), "ncclGinPlugin_v11");
  EXPECT_EQ(taken("2.29.7", TableFamily::Gin, all), "ncclGinPlugin_v12");
  EXPECT_EQ(taken("2.30.4", TableFamily::Gin, all), "ncclGinPlugin_v13");
  EXPECT_EQ(taken("2.30.7", TableFamily::Gin, all), "ncclGinPlugin_v14");
  // 2.30.7 no longer looks for v11 or v12.
  EXPECT_EQ(taken("2.30.7", TableFamily::Gin, {"ncclGinPlugin_v12"}), "");
}

TEST(ExtraTables, RmaFrom2307FallsBackToTheGinV13Layout) {
  EXPECT_EQ(taken("2.30.7", TableFamily::Rma, {"ncclRmaPlugin_v14", "ncclRmaPlugin_v13"}),
            "ncclRmaPlugin_v14");
  EXPECT_EQ(taken("2.30.7", TableFamily::Rma, {"ncclRmaPlugin_v13", "ncclGinPlugin_v13"}),
            "ncclRmaPlugin_v13");
  EXPECT_EQ(taken("2.30.7", TableFamily::Rma, {"ncclGinPlugin_v13"}), "ncclGinPlugin_v13");
  EXPECT_EQ(taken("2.29.7", TableFamily::Rma, {"ncclRmaPlugin_v14"}), "");
}

TEST(ExtraTables, CollNetFollowsTheNetWindow) {
  std::set<std::string> all;
  for (int v = 6; v <= 12; v++) all.insert("ncclCollNetPlugin_v" + std::to_string(v));
  EXPECT_EQ(taken("2.28.9", TableFamily::CollNet, all), "ncclCollNetPlugin_v11");
  EXPECT_EQ(taken("2.30.7", TableFamily::CollNet, all), "ncclCollNetPlugin_v12");
  EXPECT_EQ(taken("2.23", TableFamily::CollNet, all), "ncclCollNetPlugin_v8");
  EXPECT_EQ(taken("2.28.9", TableFamily::CollNet, {"ncclCollNetPlugin_v12"}), "");
}

TEST(ExtraTables, EveryReleaseSaysWhyForEveryFamily) {
  for (const auto& release : ncclnet::host::knownNcclReleases()) {
    auto searches = extraTableSearches(release);
    ASSERT_EQ(searches.size(), 3u);
    for (const TableChoice& c :
         extraTablesTaken(release, [](const std::string&) { return true; })) {
      EXPECT_FALSE(c.why.empty()) << release.text();
    }
    for (const auto& s : searches) {
      // A family with symbols names NCCL's source; one without says why not.
      EXPECT_FALSE(s.symbols.empty() ? s.note.empty() : s.source.empty())
          << release.text() << " " << ncclnet::host::tableFamilyName(s.family);
    }
  }
}

}  // namespace
