// Winograd convolution for 3x3 (2D) and 3x3x3 (3D) stride-1 kernels, F(2,3)
// and in 2D F(4,3): the transforms of ours, the products by our GEMM (Kernels::gemm)
// or XNNPACK's batched GEMM.
//
// Each output tile of m x m (x m) pixels reads an (m+2) x (m+2) (x (m+2)) input
// tile; with P = 16 or 36 (2D) or 64 (3D) transformed points, the convolution is
//   V[p][t][c]  = (B^T d B)      input tiles, per point p, tile t, channel c
//   U[p][c][o]  = (G g G^T)      weights, once at finalize
//   M[p][t][o]  = sum_c V[p][t][c] * U[p][c][o]   (P GEMMs: ours or XNNPACK's)
//     or its transpose M^T = U^T V^T, where few tiles meet many channels:
//     then the weights are the GEMM's rows, streamed once, and V is the
//     small packed operand that stays in cache
//   y           = A^T M A + bias, clamped          output tiles
// (the 1D transforms applied along each axis). The tiles go through in chunks
// whose V and M stay small, so the arena grows by the chunk, not by the image.
// The same GEMM kernels also run 1x1 convolutions (Kernels::pointwise), and
// the table holds our 3x3 depthwise convolution at each width too.
// Tensors are channels-last ([N, D, H, W, C], D = 1 in 2D).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/layout.h"
#include "platform/thread_pool.h"

namespace tracegraph::xnnpack::winograd {

using i64 = std::int64_t;

struct Geometry {
  int rank = 2;  // spatial dims: 2 or 3
  int tile = 2;  // output pixels per tile and axis: F(2,3), or F(4,3) in 2D
  i64 batch = 1, in_channels = 1, out_channels = 1;
  i64 in[3] = {1, 1, 1};    // input D, H, W (D = 1 in 2D)
  i64 out[3] = {1, 1, 1};   // output D, H, W
  i64 pad[3] = {0, 0, 0};   // padding before each axis (the same after)
  i64 tiles_axis[3] = {1, 1, 1};

  // From the input's spatial sizes and the padding; false where the output
  // would be empty or the tile is not one of F(2,3), F(4,3) in 2D.
  static bool make(int rank, int tile, i64 batch, i64 in_channels, i64 out_channels, const i64* in_sizes, const i64* padding, Geometry& g);
  int span() const { return tile + 2; }  // input pixels per tile and axis
  int points() const { return rank == 3 ? span() * span() * span() : span() * span(); }
  i64 tiles() const { return batch * tiles_axis[0] * tiles_axis[1] * tiles_axis[2]; }
};

// Torch's weight [O][C][3][3] or [O][C][3][3][3] as U [P][C][O], or as its
// transpose [P][O][C] with `output_major`.
std::vector<float> transform_weights(const Geometry& g, const float* weight, bool output_major);

// A 1x1 convolution (2D or 3D, stride 1, no padding, no groups) over
// channels-last pixels: y [pixels][O] = clamp(x [pixels][C] W + bias, min, max),
// W from pack_pointwise().
struct Pointwise {
  i64 in_channels = 1, out_channels = 1;
  float min = -__builtin_huge_valf(), max = __builtin_huge_valf();
};

// The kernels for vectors of `lanes` floats (kernel_table.h gathers them):
//  - transform_input: V [P][chunk][C] for tiles [first, first + count) of the
//    chunk starting at tile `chunk_start` (tile t lands in row t -
//    chunk_start); tiles past the last are zero;
//  - transform_output: y's tiles [first, first + count) of the chunk from M
//    [P][chunk][O] (or its transpose [P][O][chunk] with `output_major`), with
//    the bias (may be null) added and the result clamped to [min, max];
//  - gemm: M[p] = V[p] U[p] for point p and rows [first, first + count) of a
//    chunk, with our kernel: V [P][chunk][C], U from pad_columns(), M
//    [P][chunk][O]. Blocks of `rows` rows by 2 vectors of columns, each over
//    all of C in registers; every column block computes only real channels (no
//    XNNPACK tile of 8 or 32).
struct Kernels {
  int lanes;
  int rows;  // gemm()'s rows per block: a block of tiles is best a multiple of it
  int panel;  // pointwise()'s output channels per panel
  void (*transform_input)(const Geometry& g, const float* x, float* v, i64 chunk_start, i64 chunk, i64 first, i64 count);
  void (*transform_output)(const Geometry& g, const float* m, bool output_major, float* y, const float* bias, float min, float max,
                           i64 chunk_start, i64 chunk, i64 first, i64 count);
  void (*gemm)(const Geometry& g, const float* v, const float* u, float* m, i64 chunk, i64 p, i64 first, i64 count);
  // Our GEMM as a 1x1 convolution: pixels [first, first + count), output
  // channels in panels [first_panel, first_panel + panels) of `panel` each.
  void (*pointwise)(const Pointwise& p, const float* x, const float* packed, float* y, i64 first, i64 count, i64 first_panel, i64 panels);
  // The same GEMM over an unfolded convolution's input in place (unfolded()):
  // `count` output pixels, the first reading from x, each `step` floats past
  // the one before; a pixel's K = p.in_channels inputs are `runs` runs of L
  // contiguous floats at `offsets` from its start. All output panels.
  void (*direct)(const Pointwise& p, const float* x, i64 step, const i64* offsets, i64 runs, i64 L, const float* packed, float* y, i64 count);
  // A 3x3 depthwise convolution, as kernels.h's Depthwise says, with weights
  // [9][C padded by depthwise_padded()] and the bias [C padded] alike (zeros
  // past C): output rows n*OH + oy in [first, first + count).
  void (*depthwise)(const float* x, float* y, const float* weights, const float* bias, const kernels::Depthwise& d, float min, float max,
                    i64 first, i64 count);
};

// Channels rounded up to a multiple of `lanes`: the depthwise weights' rows.
inline i64 depthwise_padded(i64 channels, int lanes) { return (channels + lanes - 1) / lanes * lanes; }

// 4 lanes in every build (SSE natively, wasm SIMD); natively on x86-64, 8
// where the CPU has AVX2 and FMA, 16 where it has AVX-512F; nullptr for any
// other count.
const Kernels* kernels(int lanes);
// The widest this machine has: 16, 8 or 4.
const Kernels& widest_kernels();

// Torch's 1x1 weight [O][C] (and the bias, or null) for Kernels::pointwise
// with panels of `panel` output channels: [O / panel][C][panel], then the
// bias, all zero past O.
std::vector<float> pack_pointwise(const float* weight, const float* bias, i64 in_channels, i64 out_channels, int panel);
inline i64 pointwise_panels(i64 out_channels, int panel) { return (out_channels + panel - 1) / panel; }
// A whole 1x1 convolution of `pixels` on the pool's threads (inline without
// one): slabs of pixels whose input stays in cache, and where there are too
// few slabs to go round, the panels split too.
void pointwise(const Kernels& k, const Pointwise& p, const float* packed, const float* x, float* y, i64 pixels, pthreadpool_t pool);

// A convolution without groups as our GEMM over its unfolded input
// (im2col): each output pixel's K = KD*KH*KW*C inputs in the order
// [kz][ky][kx][c]. Pixels whose taps all fall inside the input are read in
// place (Kernels::direct); the others, where taps fall in the padding, are
// unfolded into rows with zeros there, a chunk at a time in a thread's
// scratch, and multiplied by Kernels::pointwise with K input channels. For
// convolutions with few inputs per pixel (a network's first layer: 3
// channels by 3x3 or 7x7), where XNNPACK's indirect GEMM runs at a fraction
// of its speed. x [N][D][H][W][C] and y [N][OD][OH][OW][O], channels-last; 2D
// is D = KD = 1.
struct Unfolded {
  i64 batch = 1, channels = 1;
  i64 in[3] = {1, 1, 1}, out[3] = {1, 1, 1};  // D, H, W
  i64 kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  // The output sizes from the rest; false where the output would be empty.
  bool make_output();
  i64 taps() const { return kernel[0] * kernel[1] * kernel[2]; }
  i64 row() const { return taps() * channels; }  // K
  i64 pixels() const { return batch * out[0] * out[1] * out[2]; }
};
// Torch's weight [O][C][KD][KH][KW] (or [O][C][KH][KW]) and the bias (or
// null), packed as pack_pointwise() packs a 1x1 weight of K input channels.
std::vector<float> pack_unfolded(const Unfolded& u, const float* weight, const float* bias, i64 out_channels, int panel);
// Output pixels unfolded at a time, and so the floats of scratch a thread
// needs: unfolded_chunk() * row().
i64 unfolded_chunk(const Unfolded& u);
// Output pixels [first, first + count) unfolded into rows [count][K].
void unfold(const Unfolded& u, const float* x, float* rows, i64 first, i64 count);
// The whole convolution on the pool's threads (inline without one), an
// output row a task; p says K input channels, O output channels and the
// clamp; scratch holds unfolded_chunk() * row() floats for each of the
// pool's threads.
void unfolded(const Kernels& k, const Unfolded& u, const Pointwise& p, const float* packed, const float* x, float* y, float* scratch,
              pthreadpool_t pool);

// U [P][C][O] as [P][C][O rounded up to `lanes`] (zeros past O), for gemm().
std::vector<float> pad_columns(const Geometry& g, const std::vector<float>& u, int lanes);

}  // namespace tracegraph::xnnpack::winograd
