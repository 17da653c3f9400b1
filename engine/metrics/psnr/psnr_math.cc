#include "engine/metrics/psnr/psnr_math.h"

#include <cmath>

namespace exactq {

uint32_t PsnrPeak(int bit_depth, bool reduced_hbd_peak) {
  const unsigned depth = static_cast<unsigned>(bit_depth);
  return reduced_hbd_peak ? uint32_t{255} << (depth - 8) : (uint32_t{1} << depth) - 1;
}

double PsnrMaxDb(int bit_depth, uint32_t peak, double min_sse, uint64_t plane_samples) {
  if (min_sse == 0.0) return static_cast<double>(6 * bit_depth + 12);
  // The fork's order: mse from min_sse and the plane's sample count (formed in double),
  // then the PSNR of that mse, rounded up to a whole dB.
  const double mse = min_sse / static_cast<double>(plane_samples);
  const double peak_squared = static_cast<double>(peak * peak);  // < 2^32: exact
  return std::ceil(10.0 * std::log10(peak_squared / mse));
}

double MseFromSse(uint64_t sse, uint64_t plane_samples) {
  return static_cast<double>(sse) / static_cast<double>(plane_samples);
}

double PsnrFromMse(double mse, uint32_t peak, double max_db) {
  const double peak_squared = static_cast<double>(peak * peak);  // 65535^2 < 2^32
  const double floored_mse = mse > kPsnrMinMse ? mse : kPsnrMinMse;
  const double db = 10.0 * std::log10(peak_squared / floored_mse);
  return db < max_db ? db : max_db;
}

}  // namespace exactq
