// The committed EOTF table is what the generator prints, and agrees with the fork's.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/metrics/ssimulacra2/srgb_eotf_table.h"
#include "gtest/gtest.h"
#include "tools/eotf_table/srgb_eotf_exact.h"

namespace exactq {
namespace eotf_table {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

TEST(EotfTableTest, CommittedTableEqualsRegeneratedValues) {
  static_assert(ssimulacra2::kSrgbEotfTableSize == kSrgbEotfTableSize, "sizes differ");
  const std::array<float, kSrgbEotfTableSize> table = GenerateSrgbEotfTable();
  for (int i = 0; i < kSrgbEotfTableSize; ++i) {
    EXPECT_EQ(Bits(ssimulacra2::kSrgbEotfTable[i]), Bits(table[i])) << "entry " << i;
  }
}

TEST(EotfTableTest, CommittedHeaderIsTheGeneratorsOutput) {
  // A data dependency: the runfiles tree holds the header at its workspace path.
  std::ifstream in("engine/metrics/ssimulacra2/srgb_eotf_table.h", std::ios::binary);
  ASSERT_TRUE(in.good()) << "header not found in runfiles";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), RenderSrgbEotfTableHeader())
      << "stale header: bazel run //tools/eotf_table:generate_eotf_table > "
         "engine/metrics/ssimulacra2/srgb_eotf_table.h";
}

// A sample of the fork's published table (lusoris/vmaf c2a3c7e0,
// libvmaf/src/feature/ssimulacra2_eotf_lut.h, computed in Python doubles and then
// rounded to f32). All 1024 of its entries equal ours; these cover both branches, the
// branch boundary (41/42) and both ends.
TEST(EotfTableTest, AgreesWithForkPublishedSample) {
  struct Entry {
    int index;
    float value;
  };
  constexpr Entry kFork[] = {
      {1, 0x1.3d5678p-14f},   {2, 0x1.3d5678p-13f},   {40, 0x1.8cac16p-9f},   {41, 0x1.9696cap-9f},
      {42, 0x1.a0a38cp-9f},   {43, 0x1.aae328p-9f},   {64, 0x1.524dbep-8f},   {128, 0x1.d6fbaep-7f},
      {255, 0x1.9e6068p-5f},  {256, 0x1.a1942ep-5f},  {384, 0x1.dc2cc8p-4f},  {511, 0x1.b56e2ap-3f},
      {512, 0x1.b74888p-3f},  {640, 0x1.65a4fap-2f},  {767, 0x1.0b560ep-1f},  {768, 0x1.0c1dbcp-1f},
      {896, 0x1.7b1fc0p-1f},  {1000, 0x1.e633ecp-1f}, {1021, 0x1.fdb9d2p-1f}, {1022, 0x1.fedcb8p-1f},
      {1023, 0x1.000000p+0f},
  };
  for (const Entry& e : kFork) {
    EXPECT_EQ(Bits(ssimulacra2::kSrgbEotfTable[e.index]), Bits(e.value)) << "entry " << e.index;
  }
}

// Independent of the rational machinery: every entry is within half an f32 ulp of a
// long double evaluation (so it is the nearest f32 unless powl is off by more than the
// margin, which the exact comparisons rule out), and both ends are exact.
TEST(EotfTableTest, EntriesAreNearestToLongDoubleValues) {
  EXPECT_EQ(ssimulacra2::kSrgbEotfTable[0], 0.0f);
  EXPECT_EQ(ssimulacra2::kSrgbEotfTable[1023], 1.0f);
  for (int i = 1; i < kSrgbEotfTableSize; ++i) {
    const long double v = static_cast<long double>(i) / 1023;
    const long double exact = v <= 0.04045L ? v / 12.92L : powl((v + 0.055L) / 1.055L, 2.4L);
    const float entry = ssimulacra2::kSrgbEotfTable[i];
    const long double ulp = nextafterf(entry, 2.0f) - entry;
    EXPECT_LE(fabsl(static_cast<long double>(entry) - exact), ulp / 2) << "entry " << i;
  }
}

TEST(EotfTableTest, TableIncreases) {
  for (int i = 1; i < kSrgbEotfTableSize; ++i) {
    EXPECT_LT(ssimulacra2::kSrgbEotfTable[i - 1], ssimulacra2::kSrgbEotfTable[i]) << i;
  }
}

}  // namespace
}  // namespace eotf_table
}  // namespace exactq
