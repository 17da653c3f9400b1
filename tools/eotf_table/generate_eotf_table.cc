// Prints engine/metrics/ssimulacra2/srgb_eotf_table.h (see srgb_eotf_exact.h):
//   bazel run //tools/eotf_table:generate_eotf_table >
//       engine/metrics/ssimulacra2/srgb_eotf_table.h

#include <cstdio>
#include <string>

#include "tools/eotf_table/srgb_eotf_exact.h"

int main() {
  const std::string header = exactq::eotf_table::RenderSrgbEotfTableHeader();
  std::fwrite(header.data(), 1, header.size(), stdout);
  return 0;
}
