// SPDX-License-Identifier: Apache-2.0
// The rule list's lookups and the spellings reports and log lines use. The
// list's order, its unique numbers and its titles are checked where it is
// compiled (static_assert in rules.hpp); what is left is what a reader of a
// report or log line relies on.
#include "ncclnet/contract/rules.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

namespace ncclnet::contract {
namespace {

TEST(Rules, EveryNumberFindsItsRule) {
  for (const RuleInfo& info : allRules()) {
    const RuleInfo* found = findRule(ruleNumber(info.rule));
    ASSERT_NE(found, nullptr) << info.name;
    EXPECT_EQ(found, &info);
    EXPECT_EQ(&ruleInfo(info.rule), &info);
  }
}

TEST(Rules, RetiredAndUnusedNumbersFindNothing) {
  // 7 and 13 are checklist items the suite does not check
  // (docs/contract.md, "How rules are numbered").
  EXPECT_EQ(findRule(7), nullptr);
  EXPECT_EQ(findRule(13), nullptr);
  EXPECT_EQ(findRule(-1), nullptr);
}

TEST(Rules, NamesAreOneWordReportsCanQuote) {
  // docs/contract.md's headings and the checker's "rule N Name:" lines are
  // read back word by word.
  std::set<std::string> names;
  for (const RuleInfo& info : allRules()) {
    std::string name = info.name;
    ASSERT_FALSE(name.empty());
    EXPECT_TRUE(std::isupper(static_cast<unsigned char>(name[0]))) << name;
    for (char c : name) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << name;
    EXPECT_TRUE(names.insert(name).second) << name;
  }
}

TEST(Rules, TagAndLabelSpellings) {
  EXPECT_EQ(ruleTag(Rule::TagRouting), "rule 30 TagRouting");
  EXPECT_EQ(ruleLabel(Rule::ZeroByteMessages),
            "rule 33 ZeroByteMessages (zero-byte messages complete)");
  EXPECT_STREQ(severityName(ruleInfo(Rule::TagRouting).severity), "MUST");
  EXPECT_STREQ(severityName(ruleInfo(Rule::PeerDeathSurfaces).severity), "SHOULD");
  EXPECT_TRUE(isShould(Rule::PeerDeathSurfaces));
  EXPECT_FALSE(isShould(Rule::TagRouting));
}

// The checker's constants are references into the list, taken at compile time.
static_assert(ruleNumber(ruleInfo(Rule::NcclJobsSucceed).rule) == 60);
static_assert(findRule(32) == &ruleInfo(Rule::TruncationIsAnError));

}  // namespace
}  // namespace ncclnet::contract
