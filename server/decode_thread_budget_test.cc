#include "server/decode_thread_budget.h"

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

}  // namespace
}  // namespace exactq::server
