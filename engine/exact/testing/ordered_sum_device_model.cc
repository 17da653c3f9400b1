#include "engine/exact/testing/ordered_sum_device_model.h"

#include <algorithm>

namespace exactq {
namespace exact {

std::vector<int> ModelPlan(size_t n, PlanMode mode, int fixed_frame) {
  const size_t chunks = (n + kModelChunkTerms - 1) / kModelChunkTerms;
  std::vector<int> plan(chunks);
  for (size_t c = 0; c < chunks; ++c) plan[c] = PlanFrame(0.0, mode, fixed_frame, c);
  return plan;
}

std::vector<int> HostPrefixPlan(const double* terms, size_t n, PlanMode mode, int fixed_frame) {
  const size_t chunks = (n + kModelChunkTerms - 1) / kModelChunkTerms;
  std::vector<int> plan(chunks);
  double prefix = 0.0;
  for (size_t c = 0; c < chunks; ++c) {
    plan[c] = PlanFrame(prefix, mode, fixed_frame, c);
    const size_t len = std::min<size_t>(kModelChunkTerms, n - c * kModelChunkTerms);
    prefix = prefix + OrderedSumReference::Loop(terms + c * kModelChunkTerms, len);
  }
  return plan;
}

namespace {

// The re-plan of a refused chunk, as AddChunkByReplan does it: rounds that summarise the
// remaining sub-chunks under the exact sum's frame, apply the longest accepted prefix of
// them, and add the first refused one term by term.
void ReplanChunk(const double* chunk, int count, uint64_t& s, OrderedSumStats& stats) {
  const int subchunks = (count + kModelSubchunkTerms - 1) / kModelSubchunkTerms;
  int sub = 0;
  while (sub < subchunks) {
    const int frame = FrameOfBits(s);
    RunSummary prefix = IdentityRun();
    int refused = subchunks;
    uint64_t after_accepted = s;
    for (int k = sub; k < subchunks; ++k) {
      const int begin = k * kModelSubchunkTerms;
      const int len = std::min(kModelSubchunkTerms, count - begin);
      prefix = Compose(prefix, SummarizeTerms(chunk + begin, static_cast<size_t>(len), frame));
      uint64_t trial = s;
      if (!TryApplyRun(trial, prefix, frame)) {
        refused = k;
        break;
      }
      after_accepted = trial;
    }
    s = after_accepted;
    if (refused < subchunks) {
      const int begin = refused * kModelSubchunkTerms;
      const int end = std::min(begin + kModelSubchunkTerms, count);
      double acc = DoubleOf(s);
      for (int j = begin; j < end; ++j) acc = acc + chunk[j];
      s = BitsOf(acc);
      ++stats.subchunks_rejected;
      stats.terms_one_by_one += end - begin;
    }
    sub = refused + 1;
  }
}

}  // namespace

double ModelDeviceWalk(const double* terms, size_t n, const std::vector<int>& plan, OrderedSumStats* stats_out) {
  const int64_t chunks = static_cast<int64_t>((n + kModelChunkTerms - 1) / kModelChunkTerms);
  const auto chunk_length = [&](int64_t c) {
    return static_cast<int>(std::min<size_t>(kModelChunkTerms, n - static_cast<size_t>(c) * kModelChunkTerms));
  };
  // Summaries as the device forms them: lanes of 4 consecutive terms composed in order
  // (equal to a left fold by associativity; the algebra tests check that).
  std::vector<RunSummary> summaries(static_cast<size_t>(chunks));
  for (int64_t c = 0; c < chunks; ++c) {
    const double* chunk = terms + c * kModelChunkTerms;
    RunSummary run = IdentityRun();
    for (int lane = 0; lane * 4 < chunk_length(c); ++lane) {
      const int len = std::min(4, chunk_length(c) - lane * 4);
      run = Compose(run, SummarizeTerms(chunk + lane * 4, static_cast<size_t>(len), plan[c]));
    }
    summaries[c] = run;
  }

  OrderedSumStats stats;
  stats.terms = static_cast<int64_t>(n);
  stats.chunks = chunks;
  uint64_t s = 0;
  int64_t c = 0;
  while (c < chunks) {
    const int frame = plan[c];
    int window = kModelWindowChunks;
    for (int k = 0; k < kModelWindowChunks; ++k) {
      if (c + k >= chunks || plan[c + k] != frame) {
        window = k;
        break;
      }
    }
    RunSummary prefix = IdentityRun();
    int accepted = window;
    uint64_t after_accepted = s;
    for (int k = 0; k < window; ++k) {
      prefix = Compose(prefix, summaries[c + k]);
      uint64_t trial = s;
      if (!TryApplyRun(trial, prefix, frame)) {
        accepted = k;
        break;
      }
      after_accepted = trial;
    }
    s = after_accepted;
    c += accepted;
    if (accepted < window) {
      ++stats.chunks_rejected;
      ReplanChunk(terms + c * kModelChunkTerms, chunk_length(c), s, stats);
      ++c;
    }
  }
  // The device reports one composed step per run of chunks with one plan, plus one per
  // refused chunk (its windows are not the model's, but this count is the same for both).
  int64_t plan_runs = 0;
  for (int64_t k = 0; k < chunks; ++k) plan_runs += (k == 0 || plan[k] != plan[k - 1]) ? 1 : 0;
  stats.walk_windows = plan_runs + stats.chunks_rejected;
  if (stats_out != nullptr) *stats_out = stats;
  return DoubleOf(s);
}

}  // namespace exact
}  // namespace exactq
