// Winograd's weights and geometry (the tile transforms are winograd_kernels.h's),
// and the weights padded for our GEMM.
#include "kernels/conv/winograd.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "tracegraph/shape_rules.h"

namespace tracegraph::xnnpack::winograd {

namespace {

// G along one axis: three taps to `points` (4 or 6) values.
inline void weight_1d(int points, const double g[3], double* u) {
  if (points == 4) {
    u[0] = g[0];
    u[1] = 0.5 * (g[0] + g[1] + g[2]);
    u[2] = 0.5 * (g[0] - g[1] + g[2]);
    u[3] = g[2];
    return;
  }
  u[0] = g[0] / 4;
  u[1] = -(g[0] + g[1] + g[2]) / 6;
  u[2] = -(g[0] - g[1] + g[2]) / 6;
  u[3] = g[0] / 24 + g[1] / 12 + g[2] / 6;
  u[4] = g[0] / 24 - g[1] / 12 + g[2] / 6;
  u[5] = g[2];
}

}  // namespace

bool Geometry::make(int rank, int tile, i64 batch, i64 in_channels, i64 out_channels, const i64* in_sizes, const i64* padding, Geometry& g) {
  g = Geometry{};
  if ((tile != 2 && tile != 4) || (rank == 3 && tile != 2)) return false;
  g.rank = rank;
  g.tile = tile;
  g.batch = batch;
  g.in_channels = in_channels;
  g.out_channels = out_channels;
  const int first = 3 - rank;
  for (int axis = first; axis < 3; ++axis) {
    g.in[axis] = in_sizes[axis - first];
    g.pad[axis] = padding[axis - first];
    const std::optional<i64> out = shape_rules::window_output(g.in[axis], 3, 1, g.pad[axis], 1);  // 3x3, stride 1
    if (!out) return false;
    g.out[axis] = *out;
    g.tiles_axis[axis] = (g.out[axis] + tile - 1) / tile;
  }
  return batch > 0 && in_channels > 0 && out_channels > 0;
}

std::vector<float> transform_weights(const Geometry& g, const float* weight, bool output_major) {
  const i64 C = g.in_channels, O = g.out_channels, P = g.points();
  const int a = g.span(), kd = g.rank == 3 ? 3 : 1, td = g.rank == 3 ? a : 1;
  std::vector<float> u(static_cast<std::size_t>(P * C * O));
  // The innermost index runs over the layout's last axis: P sequential writes.
  const i64 outer_count = output_major ? O : C, inner_count = output_major ? C : O;
  for (i64 outer = 0; outer < outer_count; ++outer) {
    for (i64 inner = 0; inner < inner_count; ++inner) {
      const i64 o = output_major ? outer : inner, c = output_major ? inner : outer;
      const float* w = weight + (o * C + c) * kd * 9;
      // Along W, then H, then D: [kd][3][3] -> [kd][3][a] -> [kd][a][a] -> [td][a][a].
      double along_w[3][3][6], along_h[3][6][6], along_d[6][6][6];
      for (int z = 0; z < kd; ++z)
        for (int y = 0; y < 3; ++y) {
          const double row[3] = {w[(z * 3 + y) * 3], w[(z * 3 + y) * 3 + 1], w[(z * 3 + y) * 3 + 2]};
          weight_1d(a, row, along_w[z][y]);
        }
      for (int z = 0; z < kd; ++z)
        for (int x = 0; x < a; ++x) {
          const double col[3] = {along_w[z][0][x], along_w[z][1][x], along_w[z][2][x]};
          double out[6];
          weight_1d(a, col, out);
          for (int y = 0; y < a; ++y) along_h[z][y][x] = out[y];
        }
      for (int y = 0; y < a; ++y)
        for (int x = 0; x < a; ++x) {
          if (kd == 1) {
            along_d[0][y][x] = along_h[0][y][x];
            continue;
          }
          const double col[3] = {along_h[0][y][x], along_h[1][y][x], along_h[2][y][x]};
          double out[6];
          weight_1d(a, col, out);
          for (int z = 0; z < a; ++z) along_d[z][y][x] = out[z];
        }
      for (int z = 0; z < td; ++z)
        for (int y = 0; y < a; ++y)
          for (int x = 0; x < a; ++x) {
            const i64 p = (z * a + y) * a + x;
            u[static_cast<std::size_t>(output_major ? (p * O + o) * C + c : (p * C + c) * O + o)] = static_cast<float>(along_d[z][y][x]);
          }
    }
  }
  return u;
}

std::vector<float> pad_columns(const Geometry& g, const std::vector<float>& u, int lanes) {
  const i64 rows = g.points() * g.in_channels, O = g.out_channels, padded = (O + lanes - 1) / lanes * lanes;
  std::vector<float> out(static_cast<std::size_t>(rows * padded));
  for (i64 r = 0; r < rows; ++r) std::copy_n(u.begin() + r * O, O, out.begin() + r * padded);
  return out;
}

}  // namespace tracegraph::xnnpack::winograd
