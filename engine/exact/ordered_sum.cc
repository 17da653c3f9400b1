#include "engine/exact/ordered_sum.h"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "engine/exact/internal/binary64_summaries.h"
#include "engine/exact/internal/cpu_kernels.h"

// The loop is the definition, and the fallback adds must be the same binary64 adds: no
// extended precision (x87) and no contraction.
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "exact sums need FLT_EVAL_METHOD == 0 (binary64 adds, e.g. SSE2 on x86-64)"
#endif

namespace exactq {
namespace exact {

double OrderedSumReference::Loop(const double* terms, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) s = s + terms[i];
  return s;
}

absl::StatusOr<double> OrderedSumReference::Sum(const double* terms, size_t n, OrderedSumStats* stats) {
  if (stats != nullptr) {
    *stats = OrderedSumStats{};
    stats->terms = static_cast<int64_t>(n);
    stats->terms_one_by_one = static_cast<int64_t>(n);
  }
  return Loop(terms, n);
}

RunSummary SummarizeTerms(const double* terms, size_t n, int frame) {
  RunSummary run = IdentityRun();
  for (size_t i = 0; i < n; ++i) AppendTerm(run, BitsOf(terms[i]), frame);
  return run;
}

namespace {

// SummarizeTerms through the binary64 fold of internal/binary64_summaries.h (which hands ties and
// long paths to the binary64 increments, and those to the integer rule): the same
// summary, several times faster.
RunSummary SummarizeFast(const double* terms, size_t n, int frame) {
  if (n > static_cast<size_t>(INT32_MAX)) return SummarizeTerms(terms, n, frame);
  return SummarizeTermsBinary64(terms, static_cast<int>(n), frame);
}

}  // namespace

void AddTermsByReplan(const double* terms, size_t n, int64_t subchunk_terms, double& s, OrderedSumStats& stats) {
  const size_t step = static_cast<size_t>(std::max<int64_t>(1, subchunk_terms));
  for (size_t begin = 0; begin < n; begin += step) {
    const size_t len = std::min(step, n - begin);
    uint64_t bits = BitsOf(s);
    // The exact sum is known here, so its frame is the right plan; only a binade crossing
    // (or a zero crossing, an inf, a NaN) inside the sub-chunk makes the check refuse.
    const int frame = FrameOfBits(bits);
    const RunSummary run = SummarizeFast(terms + begin, len, frame);
    if (TryApplyRun(bits, run, frame)) {
      s = DoubleOf(bits);
      continue;
    }
    ++stats.subchunks_rejected;
    stats.terms_one_by_one += static_cast<int64_t>(len);
    for (size_t i = begin; i < begin + len; ++i) s = s + terms[i];
  }
}

namespace {

// The kernels for this chunk size and choice, or null for the scalar code.
const internal::ChunkKernels* KernelsFor(OrderedSumOptions::HostKernels choice, int64_t chunk_terms) {
  using HostKernels = OrderedSumOptions::HostKernels;
  if (choice == HostKernels::kScalar || !internal::KernelChunk(chunk_terms)) return nullptr;
  if (choice == HostKernels::kAuto && internal::Avx2Supported()) return &internal::Avx2ChunkKernels();
  return &internal::GenericChunkKernels();
}

// Chunks per block: whole groups of four, about 256 KiB of terms (the block is read from
// memory by the approximate pass and again, from L2, by the summaries).
int64_t ChunksPerBlock(int64_t chunk_terms) {
  constexpr int64_t kBlockTerms = 32 * 1024;
  const int64_t chunks = std::max<int64_t>(1, kBlockTerms / chunk_terms);
  return (chunks + 3) / 4 * 4;
}

// How many blocks have their plan folded (the approximate prefix after them is known).
// A thread that needs the block before its own waits here: briefly spinning (the fold is
// a few dozen adds), then asleep, so that a busy machine can run the thread it waits for.
class PlanChain {
 public:
  void Publish(int64_t planned) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      planned_.store(planned, std::memory_order_release);
    }
    cv_.notify_all();
  }

  void WaitFor(int64_t planned) {
    for (int spin = 0; spin < 2000; ++spin) {
      if (planned_.load(std::memory_order_acquire) >= planned) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return planned_.load(std::memory_order_acquire) >= planned; });
  }

 private:
  std::atomic<int64_t> planned_{0};
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace

OrderedSumThreads::OrderedSumThreads(int num_threads, OrderedSumOptions options, WorkerPool* pool)
    : num_threads_(std::max(1, num_threads)), options_(options), pool_(pool) {}

const char* OrderedSumThreads::kernels() const {
  const internal::ChunkKernels* k = KernelsFor(options_.host_kernels, options_.chunk_terms);
  return k == nullptr ? "scalar" : k->isa;
}

absl::StatusOr<double> OrderedSumThreads::Sum(const double* terms, size_t n, OrderedSumStats* stats_out) {
  if (options_.chunk_terms < 1 || options_.subchunk_terms < 1) {
    return absl::InvalidArgumentError("OrderedSumThreads: chunk_terms and subchunk_terms must be >= 1");
  }
  const int64_t chunk = options_.chunk_terms;
  const int64_t total = static_cast<int64_t>(n);
  const int64_t num_chunks = (total + chunk - 1) / chunk;
  const auto chunk_length = [&](int64_t c) { return static_cast<size_t>(std::min<int64_t>(chunk, total - c * chunk)); };
  const internal::ChunkKernels* kernels = KernelsFor(options_.host_kernels, chunk);
  const int64_t per_block = ChunksPerBlock(chunk);
  const int64_t num_blocks = (num_chunks + per_block - 1) / per_block;

  // Every entry is written before it is read (default-initialised: no pass to zero them).
  std::unique_ptr<double[]> chunk_sums(new double[static_cast<size_t>(num_chunks)]);
  std::unique_ptr<int[]> plan(new int[static_cast<size_t>(num_chunks)]);
  std::unique_ptr<RunSummary[]> summaries(new RunSummary[static_cast<size_t>(num_chunks)]);
  // block_prefix[b]: the approximate prefix before block b, valid once planned >= b.
  std::unique_ptr<double[]> block_prefix(new double[static_cast<size_t>(num_blocks + 1)]);
  block_prefix[0] = 0.0;
  std::atomic<int64_t> next_block{0};
  PlanChain chain;

  // Groups of four whole chunks go to the kernels, the rest to the scalar code: the
  // kernels take chunks [first, kernel_end_of(first)) of the block that starts at `first`.
  const auto kernel_end_of = [&](int64_t first) {
    const int64_t end = std::min(num_chunks, first + per_block);
    int64_t kernel_end = first;
    if (kernels != nullptr) {
      while (kernel_end + 4 <= end && (kernel_end + 4) * chunk <= total) kernel_end += 4;
    }
    return kernel_end;
  };

  const auto work = [&] {
    int64_t b = next_block.fetch_add(1, std::memory_order_relaxed);
    while (b < num_blocks) {
      const int64_t first = b * per_block;
      const int64_t end = std::min(num_chunks, first + per_block);
      const int64_t kernel_end = kernel_end_of(first);

      // 1. Approximate chunk sums (any fixed order would do: they only feed the plan).
      for (int64_t c = first; c < kernel_end; c += 4)
        kernels->approximate_sums4(terms + c * chunk, chunk, &chunk_sums[c]);
      for (int64_t c = kernel_end; c < end; ++c)
        chunk_sums[c] = internal::ApproximateChunkSum(terms + c * chunk, chunk_length(c));

      // 2. The plan, from the approximate prefix before each chunk, folded in chunk order
      // across blocks: the same plan for every thread count.
      chain.WaitFor(b);
      double prefix = block_prefix[b];
      for (int64_t c = first; c < end; ++c) {
        plan[c] = PlanFrame(prefix, options_.plan_mode, options_.fixed_frame, static_cast<uint64_t>(c));
        prefix = prefix + chunk_sums[c];
      }
      block_prefix[b + 1] = prefix;
      chain.Publish(b + 1);

      // 3. Summaries under the plan, from the block still in cache. This thread's next
      // block is taken now, so that the kernels can ask for its lines meanwhile (memory
      // and arithmetic overlap; the next block's approximate pass then reads the cache).
      const int64_t next = next_block.fetch_add(1, std::memory_order_relaxed);
      const int64_t next_first = next * per_block;
      const int64_t next_kernel_end = next < num_blocks ? kernel_end_of(next_first) : next_first;
      for (int64_t c = first; c < kernel_end; c += 4) {
        const int* frames = &plan[c];
        const int64_t prefetch_chunk = next_first + (c - first);
        const double* prefetch = prefetch_chunk + 4 <= next_kernel_end ? terms + prefetch_chunk * chunk : nullptr;
        if (FastFrame(frames[0]) && FastFrame(frames[1]) && FastFrame(frames[2]) && FastFrame(frames[3])) {
          const int handed_over = kernels->summarize4(terms + c * chunk, chunk, frames, &summaries[c], prefetch);
          for (int j = 0; j < 4; ++j) {
            // What SummarizeTermsBinary64 does when it hands over.
            if (handed_over & (1 << j))
              summaries[c + j] = SummarizeTermsFast(terms + (c + j) * chunk, static_cast<int>(chunk), frames[j]);
          }
        } else {
          for (int j = 0; j < 4; ++j)
            summaries[c + j] = SummarizeFast(terms + (c + j) * chunk, static_cast<size_t>(chunk), frames[j]);
        }
      }
      for (int64_t c = kernel_end; c < end; ++c)
        summaries[c] = SummarizeFast(terms + c * chunk, chunk_length(c), plan[c]);
      b = next;
    }
  };
  // Each task takes blocks from the shared counter until none is left, so the result
  // does not depend on which thread computes which block, nor on how many run.
  const int tasks = static_cast<int>(std::min<int64_t>(num_threads_, num_blocks));
  if (tasks <= 1) {
    work();
  } else {
    if (pool_ == nullptr) {
      if (own_pool_ == nullptr) own_pool_ = std::make_unique<WorkerPool>(num_threads_);
      pool_ = own_pool_.get();
    }
    pool_->Run(tasks, [&work](int, int) { work(); });
  }

  // 4. The checked walk. One step per chunk on the host: cheap next to the summaries.
  OrderedSumStats stats;
  stats.terms = total;
  stats.chunks = num_chunks;
  double s = 0.0;
  for (int64_t c = 0; c < num_chunks; ++c) {
    uint64_t bits = BitsOf(s);
    if (TryApplyRun(bits, summaries[c], plan[c])) {
      s = DoubleOf(bits);
      continue;
    }
    ++stats.chunks_rejected;
    AddTermsByReplan(terms + c * chunk, chunk_length(c), options_.subchunk_terms, s, stats);
  }
  if (stats_out != nullptr) *stats_out = stats;
  return s;
}

}  // namespace exact
}  // namespace exactq
