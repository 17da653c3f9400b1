// For a metric kernel that computes its terms and forms the chunk summaries of the exact
// sum itself, so that the terms never reach global memory (SSIM): the chunk layout and the
// term sources (DeviceArrayTerms, MappedArrayTerms), one block's ordered summary of one
// chunk (BlockOrderedChunk), a chunk's summary from a plain prefix sum when no term is a
// tie (TieFreeSummary), a decoupled look-back of approximate chunk prefixes (planning
// advice: LookbackState), and a walk over (plan, summaries) (OrderedWalk). Such a metric
// then calls the pipelines of device_sum.cuh for the frames its summaries cannot take.
#ifndef EXACTQ_ENGINE_EXACT_DEVICE_CHUNK_SUMMARIES_CUH_
#define EXACTQ_ENGINE_EXACT_DEVICE_CHUNK_SUMMARIES_CUH_

#include "engine/exact/internal/block_chunk.cuh"
#include "engine/exact/internal/chunk_lookback.cuh"
#include "engine/exact/internal/tie_free_summary.h"
#include "engine/exact/internal/window_walk.cuh"
#include "engine/exact/ordered_sum_algebra.h"

#endif  // EXACTQ_ENGINE_EXACT_DEVICE_CHUNK_SUMMARIES_CUH_
