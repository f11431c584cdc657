#include "winograd.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "simd.h"

namespace tracegraph::xnnpack::winograd {
namespace {

using simd::load;
using simd::max_of;
using simd::min_of;
using simd::store;
using simd::v4;

// B^T along one axis: A (4 or 6) values.
template <int A>
inline void input_1d(const v4* d, v4* o) {
  if constexpr (A == 4) {
    o[0] = d[0] - d[2];
    o[1] = d[1] + d[2];
    o[2] = d[2] - d[1];
    o[3] = d[1] - d[3];
  } else {
    const v4 a = d[0], b = d[1], c = d[2], e = d[3], f = d[4], h = d[5];
    o[0] = 4.0f * a - 5.0f * c + f;
    o[1] = -4.0f * (b + c) + e + f;
    o[2] = 4.0f * (b - c) - e + f;
    o[3] = 2.0f * (e - b) - c + f;
    o[4] = 2.0f * (b - e) - c + f;
    o[5] = 4.0f * b - 5.0f * e + h;
  }
}

// A^T along one axis: A values to A - 2.
template <int A>
inline void output_1d(const v4* m, v4* o) {
  if constexpr (A == 4) {
    o[0] = m[0] + m[1] + m[2];
    o[1] = m[1] - m[2] - m[3];
  } else {
    const v4 sum = m[1] + m[2], diff = m[1] - m[2], sum2 = m[3] + m[4], diff2 = m[3] - m[4];
    o[0] = m[0] + sum + sum2;
    o[1] = diff + 2.0f * diff2;
    o[2] = sum + 4.0f * sum2;
    o[3] = diff + 8.0f * diff2 + m[5];
  }
}

// A separable transform of the points in d, [Z][A][A] with Z = A in 3D and 1
// in 2D, in place: the 1D transform Line (A values to N) along W, H, then D,
// each pass over the first N of the axes already done. B^T d B with
// input_1d (N = A), A^T m A with output_1d (N = A - 2).
template <int A, int Z, int N, void (*Line)(const v4*, v4*)>
inline void separable(v4* d) {
  v4 line[A], out[N];
  for (int z = 0; z < Z; ++z)
    for (int y = 0; y < A; ++y) {
      v4* row = d + (z * A + y) * A;
      Line(row, out);
      for (int i = 0; i < N; ++i) row[i] = out[i];
    }
  for (int z = 0; z < Z; ++z)
    for (int x = 0; x < N; ++x) {
      for (int i = 0; i < A; ++i) line[i] = d[(z * A + i) * A + x];
      Line(line, out);
      for (int i = 0; i < N; ++i) d[(z * A + i) * A + x] = out[i];
    }
  if constexpr (Z > 1)
    for (int y = 0; y < N; ++y)
      for (int x = 0; x < N; ++x) {
        for (int i = 0; i < A; ++i) line[i] = d[(i * A + y) * A + x];
        Line(line, out);
        for (int i = 0; i < N; ++i) d[(i * A + y) * A + x] = out[i];
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

namespace {

// One tile's input points, every channel, into its row of V. Inside: the tile
// reads no padding (no bounds checks).
template <int A, int Z, bool Inside>
void input_tile(const Geometry& g, const float* x, float* row, i64 chunk, const Tile& tile) {
  const i64 C = g.in_channels;
  i64 origin[3];
  for (int axis = 0; axis < 3; ++axis) origin[axis] = tile.origin[axis] - g.pad[axis];
  v4 d[Z * A * A];
  for (i64 c0 = 0; c0 < C; c0 += 4) {
    const int cb = static_cast<int>(std::min<i64>(4, C - c0));
    for (int dz = 0; dz < Z; ++dz)
      for (int dy = 0; dy < A; ++dy) {
        const i64 z = origin[0] + dz, y = origin[1] + dy;
        const bool row_in = Inside || (z >= 0 && z < g.in[0] && y >= 0 && y < g.in[1]);
        const i64 start = (((tile.n * g.in[0] + z) * g.in[1] + y) * g.in[2] + origin[2]) * C + c0;
        for (int dx = 0; dx < A; ++dx) {
          const i64 xx = origin[2] + dx;
          d[(dz * A + dy) * A + dx] = row_in && (Inside || (xx >= 0 && xx < g.in[2])) ? load(x + start + dx * C, cb) : v4{};
        }
      }
    separable<A, Z, A, input_1d<A>>(d);
    for (int p = 0; p < Z * A * A; ++p) store(row + p * chunk * C + c0, d[p], cb);
  }
}

template <int A, int Z>
void input_tiles(const Geometry& g, const float* x, float* v, i64 chunk_start, i64 chunk, i64 first, i64 count) {
  const i64 C = g.in_channels, P = g.points(), tiles = g.tiles();
  for (i64 t = first; t < first + count; ++t) {
    float* row = v + (t - chunk_start) * C;
    if (t >= tiles) {
      for (i64 p = 0; p < P; ++p) std::memset(row + p * chunk * C, 0, sizeof(float) * static_cast<std::size_t>(C));
      continue;
    }
    const Tile tile = tile_at(g, t);
    bool inside = true;
    for (int axis = 3 - g.rank; axis < 3; ++axis)
      inside = inside && tile.origin[axis] >= g.pad[axis] && tile.origin[axis] - g.pad[axis] + A <= g.in[axis];
    if (inside) input_tile<A, Z, true>(g, x, row, chunk, tile);
    else input_tile<A, Z, false>(g, x, row, chunk, tile);
  }
}

template <int A, int Z>
void output_tiles(const Geometry& g, const float* m, bool output_major, float* y, const float* bias, float min, float max,
                  i64 chunk_start, i64 chunk, i64 first, i64 count) {
  constexpr int N = A - 2, P = Z * A * A, NZ = Z > 1 ? N : 1;
  const i64 O = g.out_channels;
  const v4 lo = simd::splat(min), hi = simd::splat(max);
  v4 d[P];
  for (i64 t = first; t < first + count; ++t) {
    const Tile tile = tile_at(g, t);
    for (i64 c0 = 0; c0 < O; c0 += 4) {
      const int cb = static_cast<int>(std::min<i64>(4, O - c0));
      for (int p = 0; p < P; ++p) {
        if (output_major) {  // [P][O][chunk]: the channels a chunk apart
          const float* src = m + (p * O + c0) * chunk + (t - chunk_start);
          v4 v{};
          for (int i = 0; i < cb; ++i) v[i] = src[i * chunk];
          d[p] = v;
        } else {
          d[p] = load(m + (p * chunk + (t - chunk_start)) * O + c0, cb);
        }
      }
      separable<A, Z, A - 2, output_1d<A>>(d);
      v4 b{};
      if (bias) b = load(bias + c0, cb);
      for (int dz = 0; dz < NZ; ++dz) {
        const i64 z = tile.origin[0] + dz;
        if (z >= g.out[0]) continue;
        for (int dy = 0; dy < N; ++dy) {
          const i64 yy = tile.origin[1] + dy;
          if (yy >= g.out[1]) continue;
          for (int dx = 0; dx < N; ++dx) {
            const i64 xx = tile.origin[2] + dx;
            if (xx >= g.out[2]) continue;
            const v4 clamped = min_of(max_of(d[(dz * A + dy) * A + dx] + b, lo), hi);
            store(y + (((tile.n * g.out[0] + z) * g.out[1] + yy) * g.out[2] + xx) * O + c0, clamped, cb);
          }
        }
      }
    }
  }
}

}  // namespace

void transform_input(const Geometry& g, const float* x, float* v, i64 chunk_start, i64 chunk, i64 first, i64 count) {
  if (g.rank == 3) input_tiles<4, 4>(g, x, v, chunk_start, chunk, first, count);
  else if (g.tile == 4) input_tiles<6, 1>(g, x, v, chunk_start, chunk, first, count);
  else input_tiles<4, 1>(g, x, v, chunk_start, chunk, first, count);
}

void transform_output(const Geometry& g, const float* m, bool output_major, float* y, const float* bias, float min, float max,
                      i64 chunk_start, i64 chunk, i64 first, i64 count) {
  if (g.rank == 3) output_tiles<4, 4>(g, m, output_major, y, bias, min, max, chunk_start, chunk, first, count);
  else if (g.tile == 4) output_tiles<6, 1>(g, m, output_major, y, bias, min, max, chunk_start, chunk, first, count);
  else output_tiles<4, 1>(g, m, output_major, y, bias, min, max, chunk_start, chunk, first, count);
}

std::vector<float> pad_columns(const Geometry& g, const std::vector<float>& u) {
  const i64 rows = g.points() * g.in_channels, O = g.out_channels, padded = (O + 3) / 4 * 4;
  std::vector<float> out(static_cast<std::size_t>(rows * padded));
  for (i64 r = 0; r < rows; ++r) std::copy_n(u.begin() + r * O, O, out.begin() + r * padded);
  return out;
}

namespace {

// R rows of M by NB vectors of columns (the last holding `cols` - 4 (NB - 1)
// of them), over all C: R x NB accumulators, NB weight vectors and a splat in
// registers (11 for 4 x 2: wasm's 16 SIMD registers on x86 hold them).
template <int R, int NB>
inline void gemm_block(const float* v, i64 C, const float* u, i64 ldu, float* m, i64 O, int cols) {
  v4 acc[R][NB] = {};
  for (i64 c = 0; c < C; ++c) {
    v4 w[NB];
    for (int j = 0; j < NB; ++j) std::memcpy(&w[j], u + c * ldu + 4 * j, sizeof(v4));
    for (int r = 0; r < R; ++r) {
      const v4 s = simd::splat(v[r * C + c]);
      for (int j = 0; j < NB; ++j) acc[r][j] += s * w[j];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NB; ++j) store(m + r * O + 4 * j, acc[r][j], std::min(4, cols - 4 * j));
}

template <int R>
inline void gemm_rows(const float* v, i64 C, const float* u, i64 ldu, float* m, i64 O) {
  for (i64 o0 = 0; o0 < O; o0 += 8) {
    const int cols = static_cast<int>(std::min<i64>(8, O - o0));
    if (cols > 4) gemm_block<R, 2>(v, C, u + o0, ldu, m + o0, O, cols);
    else gemm_block<R, 1>(v, C, u + o0, ldu, m + o0, O, cols);
  }
}

}  // namespace

void gemm(const Geometry& g, const float* v, const float* u, float* m, i64 chunk, i64 p, i64 first, i64 count) {
  const i64 C = g.in_channels, O = g.out_channels, ldu = (O + 3) / 4 * 4;
  const float* vp = v + (p * chunk + first) * C;
  const float* up = u + p * C * ldu;
  float* mp = m + (p * chunk + first) * O;
  i64 r = 0;
  for (; r + 4 <= count; r += 4) gemm_rows<4>(vp + r * C, C, up, ldu, mp + r * O, O);
  for (; r < count; ++r) gemm_rows<1>(vp + r * C, C, up, ldu, mp + r * O, O);
}

}  // namespace tracegraph::xnnpack::winograd
