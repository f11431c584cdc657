// Winograd convolution for 3x3 (2D) and 3x3x3 (3D) stride-1 kernels, F(2,3)
// and in 2D F(4,3): the transforms of ours, the products by our GEMM
// (conv::Kernels::gemm, conv_kernels.h) or XNNPACK's batched GEMM.
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
// The tile transforms are winograd_kernels.h's; the same GEMM kernels also
// run 1x1 convolutions (pointwise.h) and unfolded ones (unfolded.h).
// Tensors are channels-last ([N, D, H, W, C], D = 1 in 2D).
#pragma once

#include <cstdint>
#include <vector>

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

// U [P][C][O] as [P][C][O rounded up to `lanes`] (zeros past O), for
// conv::Kernels::gemm.
std::vector<float> pad_columns(const Geometry& g, const std::vector<float>& u, int lanes);

}  // namespace tracegraph::xnnpack::winograd
