#include "engine/decode/testing/encoded_samples.h"

#include <dirent.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace exactq::testing {
namespace {

// The ffmpeg CLI's encodes of its test pattern: what farms send, 8 and 10 bits.
std::vector<std::string> EncodeWithTheFfmpegCli() {
  struct Sample {
    const char* name;
    const char* args;
  };
  const Sample samples[] = {
      {"h264_8bit.mkv", "-pix_fmt yuv420p -c:v libx264 -preset ultrafast -crf 30"},
      {"hevc_8bit.mkv", "-pix_fmt yuv420p -c:v libx265 -preset ultrafast -crf 30 -x265-params log-level=none"},
      {"hevc_10bit.mkv", "-pix_fmt yuv420p10le -c:v libx265 -preset ultrafast -crf 30 -x265-params log-level=none"},
      {"vp9_8bit.webm", "-pix_fmt yuv420p -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 500k"},
      {"av1_8bit.mkv", "-pix_fmt yuv420p -c:v libsvtav1 -preset 12 -crf 40"},
  };
  std::vector<std::string> paths;
  for (const Sample& s : samples) {
    const std::string path = absl::StrCat(TempDir(), "/", s.name);
    const std::string command =
        absl::StrCat("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=352x288:rate=24 -frames:v 8 ", s.args, " ",
                     path, " 2>", TempDir(), "/ffmpeg.log");
    if (std::system(command.c_str()) == 0) paths.push_back(path);
  }
  return paths;
}

}  // namespace

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

std::vector<std::string> EncodedSamples() {
  const char* media = std::getenv("EXACTQ_DECODE_MEDIA");
  if (media == nullptr || *media == '\0') return EncodeWithTheFfmpegCli();
  std::vector<std::string> paths;
  if (DIR* dir = opendir(media); dir != nullptr) {
    while (const dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') paths.push_back(absl::StrCat(media, "/", e->d_name));
    }
    closedir(dir);
  }
  return paths;
}

}  // namespace exactq::testing
