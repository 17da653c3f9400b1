// The command-line start of ExactQ's binaries: usage text, `--help` listing the flags
// defined in the binary's main file, flag names spelled with dashes or underscores,
// then Abseil's parse. Returns the positional arguments (argv[0] first).
#ifndef EXACTQ_COMMON_COMMAND_LINE_H_
#define EXACTQ_COMMON_COMMAND_LINE_H_

#include <vector>

namespace exactq {

// `main_file` is the path of the file that defines the binary's flags, e.g.
// "server/main.cc"; `--help` lists those.
std::vector<char*> ParseCommandLine(int argc, char** argv, const char* usage, const char* main_file);

}  // namespace exactq

#endif  // EXACTQ_COMMON_COMMAND_LINE_H_
