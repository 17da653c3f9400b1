// The chunk stage's reads: the approximate prefix before a chunk, a chunk's terms into the
// warp's tile (cp.async for terms in memory), and columns of terms from the tile or
// straight from memory.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_CHUNK_LOADS_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_CHUNK_LOADS_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include <cuda_pipeline.h>

#include "engine/exact/internal/segment_layout.cuh"
#include "engine/exact/internal/segment_prefix.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// 3. One warp per chunk: lanes, crossings, segments.

// The approximate sum of chunks 0..c-1: the prefix of the 32-chunk sums before c's run of
// 32, then the chunk sums in it before c (warp-wide, any order: it is advice). One load
// per lane: a loop over all the 32-chunk sums before c was this kernel's main stall.
// Also gives chunk c's own approximate sum (`own`), from the same loads.
__device__ inline double ApproximatePrefix(int64_t c, const SegmentWorkspace& ws, double* own = nullptr) {
  const int lane = LaneId();
  const int64_t super = c >> 5;
  const int64_t k = (super << 5) + lane;
  const double runs_before = __ldcg(ws.super_prefix + super);
  const double mine = k <= c ? __ldcg(ws.chunk_sums + k) : 0.0;
  if (own != nullptr) *own = __shfl_sync(kFullMask, mine, static_cast<int>(c & 31));
  const double in_run = WarpSumDouble(k < c ? mine : 0.0);
  return __dadd_rn(runs_before, in_run);
}

// A warp's tile: row k = sub-chunk k, 33 doubles apart (the pad keeps both the coalesced
// copies, lane l to column l, and each lane's walk along its own row free of bank
// conflicts). 16-byte copies into 34-double rows with pair reads were measured on the
// H200: no faster on the ordered sum, slower on ssimulacra2 (380 against 384 fps at 4K).
inline constexpr int kTileStride = kSubchunkTerms + 1;
using TileRows = double (*)[kTileStride];
using ConstTileRows = const double (*)[kTileStride];

// A chunk's terms into the warp's tile, row k = sub-chunk k (zeros past the end). From a
// TermSource: through registers. From an array in device memory: asynchronous copies
// (cp.async) straight into shared memory, which keeps 64 registers free (the kernel
// then fits 6 blocks per SM). A MappedArrayTerms tile holds the STORED values: each lane
// maps its row's values as it reads them (TileLine), so no pass over the tile maps them in
// place first (on the H200, with ssimulacra2's branch-free map: 384 against 370 fps at 4K).
template <class TermSource>
__device__ inline void StartChunkLoad(const TermSource& source, size_t base, int count, TileRows rows, int lane) {
  double x[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const int k = i * 32 + lane;
    x[i] = k < count ? source(base + static_cast<size_t>(k)) : 0.0;
  }
#pragma unroll
  for (int i = 0; i < 32; ++i) rows[i][lane] = x[i];
}
template <class TermSource>
__device__ inline void FinishChunkLoad(const TermSource&) {}

__device__ inline void StartChunkLoad(const DeviceArrayTerms& source, size_t base, int count, TileRows rows, int lane) {
  if (count == kChunkTerms) {  // every chunk but a sum's last: no bounds, one base address
    const double* from = source.terms + base + static_cast<size_t>(lane);
#pragma unroll
    for (int i = 0; i < 32; ++i) __pipeline_memcpy_async(&rows[i][lane], from + i * 32, sizeof(double));
    __pipeline_commit();
    return;
  }
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const int k = i * 32 + lane;
    if (k < count) {
      __pipeline_memcpy_async(&rows[i][lane], source.terms + base + static_cast<size_t>(k), sizeof(double));
    } else {
      rows[i][lane] = 0.0;
    }
  }
  __pipeline_commit();
}
__device__ inline void FinishChunkLoad(const DeviceArrayTerms&) { __pipeline_wait_prior(0); }

template <class Map>
__device__ inline void StartChunkLoad(const MappedArrayTerms<Map>& source, size_t base, int count, TileRows rows,
                                      int lane) {
  StartChunkLoad(DeviceArrayTerms{source.stored}, base, count, rows, lane);
}
template <class Map>
__device__ inline void FinishChunkLoad(const MappedArrayTerms<Map>&) {
  __pipeline_wait_prior(0);
}

// A lane's line of the tile as its sum's terms: its row (its sub-chunk, stride 1: the
// tile path) or its column (terms lane, lane+32, ..., stride kTileStride: the strided
// form); the stored values themselves, or for a MappedArrayTerms the map of each (only
// indices below the lane's length are read: the zeros past the end are never mapped).
struct NoMap {
  __device__ double operator()(double x) const { return x; }
};
template <int kStride, class Map>
struct TileLine {
  static constexpr bool kNonNegative = MapGivesNonNegativeTerms<Map>::value;
  const double* first;
  Map map;
  __device__ double operator[](int i) const { return map(first[i * kStride]); }
};
template <class TermSource>
__device__ inline TileLine<1, NoMap> RowOf(const TermSource&, const double* row) {
  return {row, NoMap{}};
}
template <class Map>
__device__ inline TileLine<1, Map> RowOf(const MappedArrayTerms<Map>& source, const double* row) {
  return {row, source.map};
}

// Calls f(column) with the lane's column as the sum's terms; for a MappedArrayTerms the
// map comes through VisitMap (fixed to the sum's kind, if the Map offers that).
template <class TermSource, class F>
__device__ inline void WithColumn(const TermSource&, ConstTileRows rows, int lane, F&& f) {
  f(TileLine<kTileStride, NoMap>{&rows[0][lane], NoMap{}});
}
// f(line) with the stored values from `first`, kStride apart, through `map` as VisitMap
// hands it (fixed to the sum's kind, if the Map offers that).
template <int kStride, class Map, class F>
__device__ inline void WithMappedLine(const Map& map, const double* first, F&& f) {
  VisitMap(map, [&](const auto& fixed) { f(TileLine<kStride, std::decay_t<decltype(fixed)>>{first, fixed}); });
}
template <class Map, class F>
__device__ inline void WithColumn(const MappedArrayTerms<Map>& source, ConstTileRows rows, int lane, F&& f) {
  WithMappedLine<kTileStride>(source.map, &rows[0][lane], f);
}

// Where the strided form reads a chunk's columns (lane l: terms l, l + 32, ...): the
// warp's tile (TileColumns), or the source itself (MemoryColumns: each step of the warp
// reads one row of 32 terms; for a MappedArrayTerms through VisitMap, as WithColumn).
template <class TermSource>
struct TileColumns {
  const TermSource& source;
  ConstTileRows rows;
  template <class F>
  __device__ void With(int lane, F&& f) const {
    WithColumn(source, rows, lane, f);
  }
};
template <class TermSource>
struct SourceColumn {
  static constexpr bool kNonNegative = false;
  const TermSource& source;
  size_t first;
  __device__ double operator[](int i) const { return source(first + static_cast<size_t>(i) * kSubchunkTerms); }
};
template <class TermSource>
struct MemoryColumns {
  const TermSource& source;
  size_t base;
  template <class F>
  __device__ void With(int lane, F&& f) const {
    f(SourceColumn<TermSource>{source, base + static_cast<size_t>(lane)});
  }
};
template <class Map>
struct MemoryColumns<MappedArrayTerms<Map>> {
  const MappedArrayTerms<Map>& source;
  size_t base;
  template <class F>
  __device__ void With(int lane, F&& f) const {
    WithMappedLine<kSubchunkTerms>(source.map, source.stored + base + static_cast<size_t>(lane), f);
  }
};

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_CHUNK_LOADS_CUH_
