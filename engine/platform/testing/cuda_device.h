// For the GPU tests: whether this process can use a CUDA device, and the skip that every
// GPU test takes without one (CI has none), with the reason in the log.
//
//   void SetUp() override { EXACTQ_SKIP_WITHOUT_CUDA_DEVICE(); }
#ifndef EXACTQ_ENGINE_PLATFORM_TESTING_CUDA_DEVICE_H_
#define EXACTQ_ENGINE_PLATFORM_TESTING_CUDA_DEVICE_H_

#include <cstdio>
#include <string>

namespace exactq::testing {

// Empty when a CUDA device answers; otherwise why not (the CUDA error's name, or
// "0 devices"). Clears the error it may leave behind.
std::string NoCudaDeviceReason();

}  // namespace exactq::testing

#define EXACTQ_SKIP_WITHOUT_CUDA_DEVICE()                                                                \
  do {                                                                                                   \
    if (const std::string exactq_why_ = ::exactq::testing::NoCudaDeviceReason(); !exactq_why_.empty()) { \
      std::printf("skipped: no CUDA device (%s)\n", exactq_why_.c_str());                                \
      GTEST_SKIP() << "no CUDA device: " << exactq_why_;                                                 \
    }                                                                                                    \
  } while (0)

#endif  // EXACTQ_ENGINE_PLATFORM_TESTING_CUDA_DEVICE_H_
