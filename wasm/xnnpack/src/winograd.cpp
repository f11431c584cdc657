#include "winograd.h"

#include <algorithm>
#include <cstring>

namespace tracegraph::xnnpack::winograd {
namespace {

// Channels transformed together: a tile's 64 points of a block fit in L1, and
// every inner loop runs over the block's contiguous channels (wasm SIMD).
constexpr i64 kBlock = 32;

// B^T along one axis, in place: (d0, d1, d2, d3) -> (d0 - d2, d1 + d2, d2 - d1, d1 - d3).
inline void input_1d(float* d, i64 stride, i64 cb) {
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
}

// A^T along one axis, into the first two of the four: (m0 + m1 + m2, m1 - m2 - m3).
inline void output_1d(float* m, i64 stride, i64 cb) {
  float* __restrict m0 = m;
  float* __restrict m1 = m + stride;
  const float* __restrict m2 = m + 2 * stride;
  const float* __restrict m3 = m + 3 * stride;
  for (i64 i = 0; i < cb; ++i) {
    const float a = m0[i], b = m1[i], c = m2[i], e = m3[i];
    m0[i] = a + b + c;
    m1[i] = b - c - e;
  }
}

// G along one axis: (g0, g1, g2) -> (g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2).
inline void weight_1d(const double g[3], double u[4]) {
  u[0] = g[0];
  u[1] = 0.5 * (g[0] + g[1] + g[2]);
  u[2] = 0.5 * (g[0] - g[1] + g[2]);
  u[3] = g[2];
}

struct Tile {
  i64 n, origin[3];
};
Tile tile_at(const Geometry& g, i64 t) {
  Tile tile{};
  for (int axis = 2; axis >= 0; --axis) {
    tile.origin[axis] = 2 * (t % g.tiles_axis[axis]);
    t /= g.tiles_axis[axis];
  }
  tile.n = t;
  return tile;
}

}  // namespace

bool Geometry::make(int rank, i64 batch, i64 in_channels, i64 out_channels, const i64* in_sizes, const i64* padding, Geometry& g) {
  g = Geometry{};
  g.rank = rank;
  g.batch = batch;
  g.in_channels = in_channels;
  g.out_channels = out_channels;
  const int first = 3 - rank;
  for (int axis = first; axis < 3; ++axis) {
    g.in[axis] = in_sizes[axis - first];
    g.pad[axis] = padding[axis - first];
    g.out[axis] = g.in[axis] + 2 * g.pad[axis] - 2;
    if (g.out[axis] <= 0) return false;
    g.tiles_axis[axis] = (g.out[axis] + 1) / 2;
  }
  return batch > 0 && in_channels > 0 && out_channels > 0;
}

std::vector<float> transform_weights(const Geometry& g, const float* weight, bool output_major) {
  const i64 C = g.in_channels, O = g.out_channels, P = g.points();
  const int kd = g.rank == 3 ? 3 : 1, td = g.rank == 3 ? 4 : 1;
  std::vector<float> u(static_cast<std::size_t>(P * C * O));
  for (i64 o = 0; o < O; ++o) {
    for (i64 c = 0; c < C; ++c) {
      const float* w = weight + (o * C + c) * kd * 9;
      double along_w[3][3][4], along_h[3][4][4], along_d[4][4][4];
      for (int z = 0; z < kd; ++z)
        for (int y = 0; y < 3; ++y) {
          const double row[3] = {w[(z * 3 + y) * 3], w[(z * 3 + y) * 3 + 1], w[(z * 3 + y) * 3 + 2]};
          weight_1d(row, along_w[z][y]);
        }
      for (int z = 0; z < kd; ++z)
        for (int x = 0; x < 4; ++x) {
          const double col[3] = {along_w[z][0][x], along_w[z][1][x], along_w[z][2][x]};
          double out[4];
          weight_1d(col, out);
          for (int y = 0; y < 4; ++y) along_h[z][y][x] = out[y];
        }
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
          if (kd == 1) {
            along_d[0][y][x] = along_h[0][y][x];
            continue;
          }
          const double col[3] = {along_h[0][y][x], along_h[1][y][x], along_h[2][y][x]};
          double out[4];
          weight_1d(col, out);
          for (int z = 0; z < 4; ++z) along_d[z][y][x] = out[z];
        }
      for (int z = 0; z < td; ++z)
        for (int y = 0; y < 4; ++y)
          for (int x = 0; x < 4; ++x)
            u[static_cast<std::size_t>(output_major ? (((z * 4 + y) * 4 + x) * O + o) * C + c : (((z * 4 + y) * 4 + x) * C + c) * O + o)] =
                static_cast<float>(along_d[z][y][x]);
    }
  }
  return u;
}

void transform_input(const Geometry& g, const float* x, float* v, i64 chunk_start, i64 chunk, i64 first, i64 count) {
  const i64 C = g.in_channels, P = g.points(), tiles = g.tiles();
  const int td = g.rank == 3 ? 4 : 1;
  alignas(64) float buf[64 * kBlock];
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
      for (int a = 0; a < td; ++a) {
        const i64 z = origin[0] + a;
        for (int b = 0; b < 4; ++b) {
          const i64 y = origin[1] + b;
          for (int c = 0; c < 4; ++c) {
            const i64 xx = origin[2] + c;
            float* d = buf + ((a * 4 + b) * 4 + c) * kBlock;
            if (z < 0 || z >= g.in[0] || y < 0 || y >= g.in[1] || xx < 0 || xx >= g.in[2]) {
              std::memset(d, 0, sizeof(float) * static_cast<std::size_t>(cb));
              continue;
            }
            const float* s = x + (((tile.n * g.in[0] + z) * g.in[1] + y) * g.in[2] + xx) * C + c0;
            for (i64 i = 0; i < cb; ++i) d[i] = s[i];
          }
        }
      }
      for (int a = 0; a < td; ++a)
        for (int b = 0; b < 4; ++b) input_1d(buf + (a * 4 + b) * 4 * kBlock, kBlock, cb);
      for (int a = 0; a < td; ++a)
        for (int c = 0; c < 4; ++c) input_1d(buf + (a * 16 + c) * kBlock, 4 * kBlock, cb);
      if (td == 4)
        for (int b = 0; b < 4; ++b)
          for (int c = 0; c < 4; ++c) input_1d(buf + (b * 4 + c) * kBlock, 16 * kBlock, cb);
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
  const int td = g.rank == 3 ? 4 : 1, od = g.rank == 3 ? 2 : 1;
  alignas(64) float buf[64 * kBlock];
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
      for (int a = 0; a < td; ++a)
        for (int b = 0; b < 4; ++b) output_1d(buf + (a * 4 + b) * 4 * kBlock, kBlock, cb);
      for (int a = 0; a < td; ++a)
        for (int c = 0; c < 2; ++c) output_1d(buf + (a * 16 + c) * kBlock, 4 * kBlock, cb);
      if (td == 4)
        for (int b = 0; b < 2; ++b)
          for (int c = 0; c < 2; ++c) output_1d(buf + (b * 4 + c) * kBlock, 16 * kBlock, cb);
      for (int a = 0; a < od; ++a) {
        const i64 z = tile.origin[0] + a;
        if (z >= g.out[0]) continue;
        for (int b = 0; b < 2; ++b) {
          const i64 yy = tile.origin[1] + b;
          if (yy >= g.out[1]) continue;
          for (int c = 0; c < 2; ++c) {
            const i64 xx = tile.origin[2] + c;
            if (xx >= g.out[2]) continue;
            const float* src = buf + ((a * 4 + b) * 4 + c) * kBlock;
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
