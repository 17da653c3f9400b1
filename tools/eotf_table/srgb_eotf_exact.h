// The sRGB EOTF table of `ssimulacra2`, computed exactly: each entry is the f32 nearest
// to the true value, found with exact rational arithmetic and rounded once.
//
// metrics-spec.md B.3 defines 1024 entries LUT[i] = srgb(i/1023), where
//   srgb(v) = v / 12.92                     for v <= 0.04045
//           = ((v + 0.055) / 1.055)^2.4     otherwise,
// each rounded to f32. With v = i/1023 and the decimal constants taken exactly, both
// branches are powers of one rational:
//   linear: v/12.92              = 100 i / 1321716                   = (a/b)^(1/1)
//   power:  ((v+0.055)/1.055)^2.4 = ((1000 i + 56265) / 1079265)^(12/5) = (a/b)^(12/5)
// so a candidate m = M * 2^E is below the true value exactly when
// M^r * 2^(rE) * b^p < a^p, a comparison of integers (a few hundred bits). The entry is
// the f32 c whose two rounding midpoints bracket the value; long double powl only gives
// the first candidate, so the result does not depend on any libm.
//
// The fork computes the same table in Python doubles and rounds that to f32 (two
// roundings); on all 1024 entries its published values equal ours
// (eotf_table_test.cc checks a sample).
//
//   std::array<float, 1024> table = exactq::eotf_table::GenerateSrgbEotfTable();
//   std::string header = exactq::eotf_table::RenderSrgbEotfTableHeader();

#ifndef EXACTQ_TOOLS_EOTF_TABLE_SRGB_EOTF_EXACT_H_
#define EXACTQ_TOOLS_EOTF_TABLE_SRGB_EOTF_EXACT_H_

#include <array>
#include <string>

namespace exactq {
namespace eotf_table {

inline constexpr int kSrgbEotfTableSize = 1024;

// srgb(i / 1023) rounded once to the nearest f32 (ties to even; none occur).
// 0 <= i < kSrgbEotfTableSize.
float SrgbEotfEntry(int i);

// All entries, in index order.
std::array<float, kSrgbEotfTableSize> GenerateSrgbEotfTable();

// The text of engine/metrics/ssimulacra2/srgb_eotf_table.h, byte for byte.
std::string RenderSrgbEotfTableHeader();

}  // namespace eotf_table
}  // namespace exactq

#endif  // EXACTQ_TOOLS_EOTF_TABLE_SRGB_EOTF_EXACT_H_
