#include "winograd.h"

#include <algorithm>
#include <cstring>

namespace tracegraph::xnnpack::winograd {
namespace {

// Channels transformed together: a tile's 64 points of a block fit in L1, and
// every inner loop runs over the block's contiguous channels (wasm SIMD).
constexpr i64 kBlock = 32;
// The most transformed points of a tile: 6x6 (F(4,3) in 2D) or 4x4x4 (F(2,3) in 3D).
constexpr i64 kMaxPoints = 64;

// B^T along one axis of `points` (4 or 6) values, in place.
inline void input_1d(int points, float* d, i64 stride, i64 cb) {
  if (points == 4) {
    float* __restrict d0 = d;
    float* __restrict d1 = d + stride;
    float* __restrict d2 = d + 2 * stride;
    float* __restrict d3 = d + 3 * stride;
    for (i64 i = 0; i < cb; ++i) {
      const float a = d0[i], b = d1[i], c = d2[i], e = d3[i];
      d0[i] = a - c;
      d1[i] = b + c;
      d2[i] = c - b;
      d3[i] = b - e;
    }
    return;
  }
  float* __restrict d0 = d;
  float* __restrict d1 = d + stride;
  float* __restrict d2 = d + 2 * stride;
  float* __restrict d3 = d + 3 * stride;
  float* __restrict d4 = d + 4 * stride;
  float* __restrict d5 = d + 5 * stride;
  for (i64 i = 0; i < cb; ++i) {
    const float a = d0[i], b = d1[i], c = d2[i], e = d3[i], f = d4[i], h = d5[i];
    d0[i] = 4 * a - 5 * c + f;
    d1[i] = -4 * (b + c) + e + f;
    d2[i] = 4 * (b - c) - e + f;
    d3[i] = 2 * (e - b) - c + f;
    d4[i] = 2 * (b - e) - c + f;
    d5[i] = 4 * b - 5 * e + h;
  }
}

// A^T along one axis, into the first 2 (of 4) or 4 (of 6) values.
inline void output_1d(int points, float* m, i64 stride, i64 cb) {
  float* __restrict m0 = m;
  float* __restrict m1 = m + stride;
  float* __restrict m2 = m + 2 * stride;
  float* __restrict m3 = m + 3 * stride;
  if (points == 4) {
    for (i64 i = 0; i < cb; ++i) {
      const float a = m0[i], b = m1[i], c = m2[i], e = m3[i];
      m0[i] = a + b + c;
      m1[i] = b - c - e;
    }
    return;
  }
  const float* __restrict m4 = m + 4 * stride;
  const float* __restrict m5 = m + 5 * stride;
  for (i64 i = 0; i < cb; ++i) {
    const float a = m0[i], b = m1[i], c = m2[i], e = m3[i], f = m4[i], h = m5[i];
    const float sum = b + c, diff = b - c, sum2 = e + f, diff2 = e - f;
    m0[i] = a + sum + sum2;
    m1[i] = diff + 2 * diff2;
    m2[i] = sum + 4 * sum2;
    m3[i] = diff + 8 * diff2 + h;
  }
}

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

struct Tile {
  i64 n, origin[3];
};
Tile tile_at(const Geometry& g, i64 t) {
  Tile tile{};
  for (int axis = 2; axis >= 0; --axis) {
    tile.origin[axis] = g.tile * (t % g.tiles_axis[axis]);
    t /= g.tiles_axis[axis];
  }
  tile.n = t;
  return tile;
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
    g.out[axis] = g.in[axis] + 2 * g.pad[axis] - 2;
    if (g.out[axis] <= 0) return false;
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

void transform_input(const Geometry& g, const float* x, float* v, i64 chunk_start, i64 chunk, i64 first, i64 count) {
  const i64 C = g.in_channels, P = g.points(), tiles = g.tiles();
  const int a = g.span(), td = g.rank == 3 ? a : 1;
  alignas(64) float buf[kMaxPoints * kBlock];
  for (i64 t = first; t < first + count; ++t) {
    float* row = v + (t - chunk_start) * C;
    if (t >= tiles) {
      for (i64 p = 0; p < P; ++p) std::memset(row + p * chunk * C, 0, sizeof(float) * static_cast<std::size_t>(C));
      continue;
    }
    const Tile tile = tile_at(g, t);
    i64 origin[3];
    for (int axis = 0; axis < 3; ++axis) origin[axis] = tile.origin[axis] - g.pad[axis];
    for (i64 c0 = 0; c0 < C; c0 += kBlock) {
      const i64 cb = std::min(kBlock, C - c0);
      for (int dz = 0; dz < td; ++dz) {
        const i64 z = origin[0] + dz;
        for (int dy = 0; dy < a; ++dy) {
          const i64 y = origin[1] + dy;
          for (int dx = 0; dx < a; ++dx) {
            const i64 xx = origin[2] + dx;
            float* d = buf + ((dz * a + dy) * a + dx) * kBlock;
            if (z < 0 || z >= g.in[0] || y < 0 || y >= g.in[1] || xx < 0 || xx >= g.in[2]) {
              std::memset(d, 0, sizeof(float) * static_cast<std::size_t>(cb));
              continue;
            }
            const float* s = x + (((tile.n * g.in[0] + z) * g.in[1] + y) * g.in[2] + xx) * C + c0;
            for (i64 i = 0; i < cb; ++i) d[i] = s[i];
          }
        }
      }
      for (int dz = 0; dz < td; ++dz)  // along W
        for (int dy = 0; dy < a; ++dy) input_1d(a, buf + (dz * a + dy) * a * kBlock, kBlock, cb);
      for (int dz = 0; dz < td; ++dz)  // along H
        for (int dx = 0; dx < a; ++dx) input_1d(a, buf + (dz * a * a + dx) * kBlock, a * kBlock, cb);
      if (g.rank == 3)  // along D
        for (int dy = 0; dy < a; ++dy)
          for (int dx = 0; dx < a; ++dx) input_1d(a, buf + (dy * a + dx) * kBlock, a * a * kBlock, cb);
      for (i64 p = 0; p < P; ++p) {
        float* dst = row + p * chunk * C + c0;
        const float* src = buf + p * kBlock;
        for (i64 i = 0; i < cb; ++i) dst[i] = src[i];
      }
    }
  }
}

void transform_output(const Geometry& g, const float* m, bool output_major, float* y, const float* bias, float min, float max,
                      i64 chunk_start, i64 chunk, i64 first, i64 count) {
  const i64 O = g.out_channels, P = g.points();
  const int a = g.span(), n = g.tile, td = g.rank == 3 ? a : 1, od = g.rank == 3 ? n : 1;
  alignas(64) float buf[kMaxPoints * kBlock];
  for (i64 t = first; t < first + count; ++t) {
    const Tile tile = tile_at(g, t);
    for (i64 c0 = 0; c0 < O; c0 += kBlock) {
      const i64 cb = std::min(kBlock, O - c0);
      for (i64 p = 0; p < P; ++p) {
        float* dst = buf + p * kBlock;
        if (output_major) {
          const float* src = m + (p * O + c0) * chunk + (t - chunk_start);
          for (i64 i = 0; i < cb; ++i) dst[i] = src[i * chunk];
        } else {
          const float* src = m + (p * chunk + (t - chunk_start)) * O + c0;
          for (i64 i = 0; i < cb; ++i) dst[i] = src[i];
        }
      }
      for (int dz = 0; dz < td; ++dz)  // along W: every row's first n values
        for (int dy = 0; dy < a; ++dy) output_1d(a, buf + (dz * a + dy) * a * kBlock, kBlock, cb);
      for (int dz = 0; dz < td; ++dz)  // along H, the first n columns
        for (int dx = 0; dx < n; ++dx) output_1d(a, buf + (dz * a * a + dx) * kBlock, a * kBlock, cb);
      if (g.rank == 3)  // along D
        for (int dy = 0; dy < n; ++dy)
          for (int dx = 0; dx < n; ++dx) output_1d(a, buf + (dy * a + dx) * kBlock, a * a * kBlock, cb);
      for (int dz = 0; dz < od; ++dz) {
        const i64 z = tile.origin[0] + dz;
        if (z >= g.out[0]) continue;
        for (int dy = 0; dy < n; ++dy) {
          const i64 yy = tile.origin[1] + dy;
          if (yy >= g.out[1]) continue;
          for (int dx = 0; dx < n; ++dx) {
            const i64 xx = tile.origin[2] + dx;
            if (xx >= g.out[2]) continue;
            const float* src = buf + ((dz * a + dy) * a + dx) * kBlock;
            float* dst = y + (((tile.n * g.out[0] + z) * g.out[1] + yy) * g.out[2] + xx) * O + c0;
            if (bias) {
              const float* bb = bias + c0;
              for (i64 i = 0; i < cb; ++i) dst[i] = std::min(std::max(src[i] + bb[i], min), max);
            } else {
              for (i64 i = 0; i < cb; ++i) dst[i] = std::min(std::max(src[i], min), max);
            }
          }
        }
      }
    }
  }
}

}  // namespace tracegraph::xnnpack::winograd
