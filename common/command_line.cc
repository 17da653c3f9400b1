#include "common/command_line.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/flags/internal/program_name.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "common/dashed_flags.h"

namespace exactq {

namespace {

bool IsHelp(const std::string& arg) {
  return arg == "--help" || arg == "-h" || arg == "-help" || arg == "--helpfull" || arg == "--helpshort";
}

}  // namespace

std::vector<char*> ParseCommandLine(int argc, char** argv, const CommandLine& command_line) {
  absl::SetProgramUsageMessage(command_line.usage);
  if (argc > 0) absl::flags_internal::SetProgramInvocationName(argv[0]);
  // Abseil's --help lists only flags of files named like the program; ours live in main files.
  static const char* help_file = nullptr;
  help_file = command_line.main_file;
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [](absl::string_view file) { return absl::StrContains(file, help_file); };
  config.version_string = [v = command_line.version] { return v + "\n"; };
  absl::SetFlagsUsageConfig(config);

  // Rewritten argv: aliases expanded, "--flag -" joined into "--flag=-".
  static std::vector<std::string> storage;
  static std::vector<char*> rewritten;
  storage.clear();
  bool positional_only = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (i > 0 && !positional_only) {
      if (arg == "--") {
        positional_only = true;
      } else if (IsHelp(arg)) {
        absl::flags_internal::FlagsHelp(std::cout, command_line.main_file,
                                        absl::flags_internal::HelpFormat::kHumanReadable, command_line.usage);
        if (!command_line.help_epilogue.empty()) std::cout << "\n" << command_line.help_epilogue;
        std::cout.flush();
        std::exit(0);
      } else if (arg == "--version" || arg == "-version") {
        std::cout << command_line.version << "\n";
        std::cout.flush();
        std::exit(0);
      } else if (auto alias = command_line.aliases.find(arg); alias != command_line.aliases.end()) {
        arg = alias->second;
      }
      if (arg.size() > 2 && arg.rfind("--", 0) == 0 && arg.find('=') == std::string::npos && i + 1 < argc &&
          std::string(argv[i + 1]) == "-") {
        arg += "=-";
        ++i;
      }
    }
    storage.push_back(arg);
  }
  rewritten.clear();
  for (std::string& s : storage) rewritten.push_back(s.data());
  rewritten.push_back(nullptr);
  int count = static_cast<int>(storage.size());
  AcceptDashedFlagNames(count, rewritten.data());
  return absl::ParseCommandLine(count, rewritten.data());
}

}  // namespace exactq
