// Our convolution kernels, one table of them for each vector width:
// Winograd's transforms and GEMM (winograd.h), the 1x1 convolution's GEMM
// (pointwise.h), the same GEMM read straight off an unfolded convolution's
// input (unfolded.h) and the 3x3 depthwise convolution (depthwise.h).
// kernel_table.h makes the table for a vector type (lanes.h says how its
// headers are compiled); kernel_table.cpp hands out the one for a width.
#pragma once

#include <cstdint>

#include "kernels/conv/depthwise.h"
#include "kernels/conv/pointwise.h"
#include "kernels/conv/winograd.h"

namespace tracegraph::xnnpack::conv {

using i64 = std::int64_t;

// The kernels for vectors of `lanes` floats (kernel_table.h gathers them):
//  - transform_input: V [P][chunk][C] for tiles [first, first + count) of the
//    chunk starting at tile `chunk_start` (tile t lands in row t -
//    chunk_start); tiles past the last are zero;
//  - transform_output: y's tiles [first, first + count) of the chunk from M
//    [P][chunk][O] (or its transpose [P][O][chunk] with `output_major`), with
//    the bias (may be null) added and the result clamped to [min, max];
//  - gemm: M[p] = V[p] U[p] for point p and rows [first, first + count) of a
//    chunk, with our kernel: V [P][chunk][C], U from winograd::pad_columns(),
//    M [P][chunk][O]. Blocks of `rows` rows by 2 vectors of columns, each over
//    all of C in registers; every column block computes only real channels (no
//    XNNPACK tile of 8 or 32).
struct Kernels {
  int lanes;
  int rows;  // gemm()'s rows per block: a block of tiles is best a multiple of it
  int panel;  // pointwise()'s output channels per panel
  void (*transform_input)(const winograd::Geometry& g, const float* x, float* v, i64 chunk_start, i64 chunk, i64 first, i64 count);
  void (*transform_output)(const winograd::Geometry& g, const float* m, bool output_major, float* y, const float* bias, float min, float max,
                           i64 chunk_start, i64 chunk, i64 first, i64 count);
  void (*gemm)(const winograd::Geometry& g, const float* v, const float* u, float* m, i64 chunk, i64 p, i64 first, i64 count);
  // Our GEMM as a 1x1 convolution: pixels [first, first + count), output
  // channels in panels [first_panel, first_panel + panels) of `panel` each.
  void (*pointwise)(const pointwise::Conv& p, const float* x, const float* packed, float* y, i64 first, i64 count, i64 first_panel, i64 panels);
  // The same GEMM over an unfolded convolution's input in place
  // (unfolded::run()): `count` output pixels, the first reading from x, each
  // `step` floats past the one before; a pixel's K = p.in_channels inputs are
  // `runs` runs of L contiguous floats at `offsets` from its start. All
  // output panels.
  void (*direct)(const pointwise::Conv& p, const float* x, i64 step, const i64* offsets, i64 runs, i64 L, const float* packed, float* y, i64 count);
  // A 3x3 depthwise convolution, as depthwise::Conv says, with weights [9][C
  // padded by depthwise::padded_channels()] and the bias [C padded] alike
  // (zeros past C): output rows n*OH + oy in [first, first + count).
  void (*depthwise)(const float* x, float* y, const float* weights, const float* bias, const depthwise::Conv& d, float min, float max,
                    i64 first, i64 count);
};

// 4 lanes in every build (SSE natively, wasm SIMD); natively on x86-64, 8
// where the CPU has AVX2 and FMA, 16 where it has AVX-512F; nullptr for any
// other count.
const Kernels* kernels(int lanes);
// The widest this machine has: 16, 8 or 4.
const Kernels& widest_kernels();

}  // namespace tracegraph::xnnpack::conv
