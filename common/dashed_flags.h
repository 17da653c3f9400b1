// Lets command lines spell flags with dashes (--metrics-listen) as well as with
// Abseil's underscores (--metrics_listen): rewrites the names in argv in place before
// absl::ParseCommandLine. Values are left alone, and so is everything after "--".
#ifndef EXACTQ_COMMON_DASHED_FLAGS_H_
#define EXACTQ_COMMON_DASHED_FLAGS_H_

namespace exactq {

void AcceptDashedFlagNames(int argc, char** argv);

}  // namespace exactq

#endif  // EXACTQ_COMMON_DASHED_FLAGS_H_
