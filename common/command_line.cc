#include "common/command_line.h"

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "common/dashed_flags.h"

namespace exactq {

std::vector<char*> ParseCommandLine(int argc, char** argv, const char* usage, const char* main_file) {
  absl::SetProgramUsageMessage(usage);
  // Abseil's --help lists only flags of files named like the program; ours live in main files.
  static const char* help_file = nullptr;
  help_file = main_file;
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [](absl::string_view file) { return absl::StrContains(file, help_file); };
  absl::SetFlagsUsageConfig(config);
  AcceptDashedFlagNames(argc, argv);
  return absl::ParseCommandLine(argc, argv);
}

}  // namespace exactq
