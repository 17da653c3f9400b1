// For the decoder tests: small encoded files to decode, 8 and 10 bits, H.264, HEVC, VP9
// and AV1. The files in $EXACTQ_DECODE_MEDIA when set (the GPU machine has no ffmpeg
// CLI; bench/device/pack_media.sh makes them), else the ffmpeg CLI's encodes of its test
// pattern made in TempDir() (none where there is no ffmpeg CLI: the tests skip).
#ifndef EXACTQ_ENGINE_DECODE_TESTING_ENCODED_SAMPLES_H_
#define EXACTQ_ENGINE_DECODE_TESTING_ENCODED_SAMPLES_H_

#include <string>
#include <vector>

namespace exactq::testing {

// $TEST_TMPDIR, else /tmp.
std::string TempDir();

// The samples' paths.
std::vector<std::string> EncodedSamples();

}  // namespace exactq::testing

#endif  // EXACTQ_ENGINE_DECODE_TESTING_ENCODED_SAMPLES_H_
