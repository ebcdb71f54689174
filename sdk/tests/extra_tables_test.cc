// SPDX-License-Identifier: Apache-2.0
// Which GIN, RMA and CollNet table each NCCL release takes from a net
// plugin's library (extra_tables.hpp), against what the releases' loaders
// do (docs/gin-rma.md).
#include "ncclnet/host/extra_tables.hpp"

#include <gtest/gtest.h>

#include <set>

namespace {

using ncclnet::host::exportedExtraTables;
using ncclnet::host::ExportedTable;
using ncclnet::host::extraTableReleases;
using ncclnet::host::extraTableSearches;
using ncclnet::host::extraTablesTaken;
using ncclnet::host::findNcclRelease;
using ncclnet::host::LibraryAttempt;
using ncclnet::host::LoadReport;
using ncclnet::host::NetLibrary;
using ncclnet::host::netLibraryIn;
using ncclnet::host::NetLibraryUse;
using ncclnet::host::TableChoice;
using ncclnet::host::TableFamily;

// The choice of one family from a library exporting `exported`.
TableChoice choice(const char* release, TableFamily family, std::set<std::string> exported,
                   const NetLibrary& net = {}) {
  auto r = findNcclRelease(release);
  EXPECT_TRUE(r.has_value()) << release;
  for (const TableChoice& c : extraTablesTaken(
           *r, [&](const std::string& s) { return exported.count(s) > 0; }, net)) {
    if (c.family == family) return c;
  }
  return TableChoice{family, "(family missing)", ""};
}

std::string taken(const char* release, TableFamily family, std::set<std::string> exported,
                  const NetLibrary& net = {}) {
  return choice(release, family, std::move(exported), net).symbol;
}

LibraryAttempt attempt(const std::string& path, int version, bool selected, const char* verdict) {
  LibraryAttempt a;
  a.file = path;
  a.opened = !path.empty();
  a.path = path;
  a.version = version;
  a.selected = selected;
  a.verdict = verdict;
  return a;
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

TEST(ExtraTables, ReleasesAreTheNewestOfEachLineWithGinOrRma) {
  std::vector<std::string> texts;
  for (const auto& r : extraTableReleases()) texts.push_back(r.text());
  EXPECT_EQ(texts, (std::vector<std::string>{"2.28.9", "2.29.7", "2.30.7"}));
}

TEST(ExtraTables, NetLibraryReplaysWhatNcclKeepsOpen) {
  LoadReport r;
  r.attempts = {attempt("/a.so", 12, false, "init failed")};
  EXPECT_EQ(netLibraryIn(r, "/a.so").use, NetLibraryUse::KeptOpen);
  EXPECT_EQ(netLibraryIn(r, "/a.so").reason, "init failed");
  // A later library without a net table closes, and clears the net library.
  r.attempts.push_back(attempt("/b.so", 0, false, "exports no version"));
  EXPECT_EQ(netLibraryIn(r, "/a.so").use, NetLibraryUse::NotReopened);
  EXPECT_EQ(netLibraryIn(r, "/b.so").use, NetLibraryUse::NotReopened);
  EXPECT_EQ(netLibraryIn(r, "/b.so").reason, "exports no version");
  // A failed dlopen leaves it as it was.
  r.attempts = {attempt("/a.so", 12, false, "init failed"), attempt("", 0, false, "dlopen failed")};
  r.attempts.back().file = "libnccl-net-x.so";
  EXPECT_EQ(netLibraryIn(r, "/a.so").use, NetLibraryUse::KeptOpen);
  // Another library selected: that one is the net library.
  r.attempts.push_back(attempt("/c.so", 11, true, "selected"));
  EXPECT_EQ(netLibraryIn(r, "/c.so").use, NetLibraryUse::Selected);
  EXPECT_EQ(netLibraryIn(r, "/a.so").use, NetLibraryUse::NotReopened);
  EXPECT_EQ(netLibraryIn(r, "/d.so").reason, "NCCL selects the net table of /c.so");
}

TEST(ExtraTables, WithoutTheNetTableOnlyTheKeptLibraryIsSearched) {
  std::set<std::string> aws = {"ncclGinPlugin_v11", "ncclGinPlugin_v13", "ncclRmaPlugin_v14",
                               "ncclCollNetPlugin_v12"};
  NetLibrary kept{NetLibraryUse::KeptOpen, "init failed"};
  NetLibrary closed{NetLibraryUse::NotReopened, "exports no version"};
  // 2.28: GIN only with the selected net table; CollNet never without it.
  TableChoice gin = choice("2.28.9", TableFamily::Gin, aws, kept);
  EXPECT_EQ(gin.symbol, "");
  EXPECT_NE(gin.why.find("not taken, because NCCL would not select this library's net table "
                         "(init failed)"),
            std::string::npos)
      << gin.why;
  EXPECT_NE(gin.why.find("ncclNetPluginAssignToComm"), std::string::npos) << gin.why;
  EXPECT_EQ(taken("2.30.7", TableFamily::CollNet, aws, kept), "");
  // 2.29.7+: the kept library is searched through ncclGetNetPluginLib.
  EXPECT_EQ(taken("2.29.7", TableFamily::Gin, aws, kept), "ncclGinPlugin_v11");
  TableChoice rma = choice("2.30.7", TableFamily::Rma, aws, kept);
  EXPECT_EQ(rma.symbol, "ncclRmaPlugin_v14");
  EXPECT_NE(rma.why.find("ncclGetNetPluginLib"), std::string::npos) << rma.why;
  // A library NCCL closed again is searched by no release.
  EXPECT_EQ(taken("2.30.7", TableFamily::Rma, aws, closed), "");
  EXPECT_EQ(taken("2.29.7", TableFamily::Gin, aws, closed), "");
}

TEST(ExtraTables, ExportedTablesIncludeVersionsTheSdkDoesNotKnow) {
  std::set<std::string> symbols = {"ncclRmaPlugin_v16", "ncclRmaPlugin_v14", "ncclGinPlugin_v11",
                                   "ncclCollNetPlugin_v5", "ncclNetPlugin_v12"};
  std::vector<ExportedTable> t =
      exportedExtraTables([&](const std::string& s) { return symbols.count(s) > 0; });
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].symbol, "ncclCollNetPlugin_v5");
  EXPECT_EQ(t[0].layout, ncclnet::host::TableLayout::Older);
  EXPECT_EQ(t[1].symbol, "ncclGinPlugin_v11");
  EXPECT_EQ(t[1].layout, ncclnet::host::TableLayout::Known);
  EXPECT_EQ(t[2].symbol, "ncclRmaPlugin_v16");
  EXPECT_EQ(t[2].layout, ncclnet::host::TableLayout::Newer);
  EXPECT_EQ(t[3].symbol, "ncclRmaPlugin_v14");
}

}  // namespace
