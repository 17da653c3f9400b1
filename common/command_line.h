// The command-line start of ExactQ's binaries: usage text, `--help` listing the flags
// defined in the binary's main file, `--version`, flag names spelled with dashes or
// underscores, short aliases, then Abseil's parse. Returns the positional arguments
// (argv[0] first).
#ifndef EXACTQ_COMMON_COMMAND_LINE_H_
#define EXACTQ_COMMON_COMMAND_LINE_H_

#include <map>
#include <string>
#include <vector>

namespace exactq {

struct CommandLine {
  const char* usage = "";      // what --help prints first (without the program's name)
  const char* main_file = "";  // the file that defines the flags --help lists, e.g. "server/main.cc"
  std::string version;         // what --version prints, e.g. "exactqd 0.1.0"
  std::string help_epilogue;   // printed after the flags (e.g. the metrics and their options)
  // Short options and the flags they stand for, e.g. {"-r", "--reference"}.
  std::map<std::string, std::string> aliases;
};

// --help (-h, --helpfull) prints the usage, the flags and the epilogue to stdout and
// exits 0; --version prints the version and exits 0. A lone "-" given as a flag's value
// (`--json -`) is taken as that value without Abseil's warning.
std::vector<char*> ParseCommandLine(int argc, char** argv, const CommandLine& command_line);

}  // namespace exactq

#endif  // EXACTQ_COMMON_COMMAND_LINE_H_
