#include "server/decode_thread_budget.h"

#include <utility>

#include "gtest/gtest.h"

namespace exactq::server {
namespace {

TEST(DecodeThreadBudgetTest, GrantsWhatIsLeftAtLeastOnePerSide) {
  DecodeThreadBudget budget(10);
  {
    DecodeThreadBudget::Grant a = budget.Take(4, 2);
    EXPECT_EQ(a.per_side(), 4u);
    DecodeThreadBudget::Grant b = budget.Take(4, 2);
    EXPECT_EQ(b.per_side(), 1u);  // 2 left: one per side
    DecodeThreadBudget::Grant c = budget.Take(4, 2);
    EXPECT_EQ(c.per_side(), 1u);  // none left: still one per side
    EXPECT_EQ(budget.in_use(), 12u);
  }
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(budget.Take(8, 2).per_side(), 5u);
}

// A stream whose reference is Y4M keeps one thread for that side once its decoders are
// open, so a later stream is granted the threads it would otherwise have been denied.
TEST(DecodeThreadBudgetTest, KeepOnlyGivesBackWhatTheDecodersDoNotUse) {
  DecodeThreadBudget budget(10);
  DecodeThreadBudget::Grant a = budget.Take(4, 2);
  a.KeepOnly(4 + 1);
  EXPECT_EQ(budget.in_use(), 5u);
  DecodeThreadBudget::Grant b = budget.Take(4, 2);
  EXPECT_EQ(b.per_side(), 2u);  // 5 left: two per side, not one
  a.KeepOnly(9);                // more than granted: nothing changes
  EXPECT_EQ(budget.in_use(), 9u);
  { DecodeThreadBudget::Grant c = std::move(b); }
  EXPECT_EQ(budget.in_use(), 5u);  // a moved grant gives back once
}

}  // namespace
}  // namespace exactq::server
