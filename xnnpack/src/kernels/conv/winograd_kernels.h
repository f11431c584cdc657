// Winograd's per-tile input and output transforms and our GEMM of the
// transformed points (conv::Kernels::transform_input, transform_output, gemm) (kernel_table.h;
// lanes.h says how these headers are compiled).
#pragma once

#include "kernels/conv/lanes.h"

namespace tracegraph::xnnpack::winograd {
namespace {

using conv::Lanes;
using conv::lesser;

// B^T along one axis: A (4 or 6) values.
template <class V, int A>
inline void input_1d(const V* d, V* o) {
  if constexpr (A == 4) {
    o[0] = d[0] - d[2];
    o[1] = d[1] + d[2];
    o[2] = d[2] - d[1];
    o[3] = d[1] - d[3];
  } else {
    const V a = d[0], b = d[1], c = d[2], e = d[3], f = d[4], h = d[5];
    o[0] = 4.0f * a - 5.0f * c + f;
    o[1] = -4.0f * (b + c) + e + f;
    o[2] = 4.0f * (b - c) - e + f;
    o[3] = 2.0f * (e - b) - c + f;
    o[4] = 2.0f * (b - e) - c + f;
    o[5] = 4.0f * b - 5.0f * e + h;
  }
}

// A^T along one axis: A values to A - 2.
template <class V, int A>
inline void output_1d(const V* m, V* o) {
  if constexpr (A == 4) {
    o[0] = m[0] + m[1] + m[2];
    o[1] = m[1] - m[2] - m[3];
  } else {
    const V sum = m[1] + m[2], diff = m[1] - m[2], sum2 = m[3] + m[4], diff2 = m[3] - m[4];
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
template <class V, int A, int Z, int N, void (*Line)(const V*, V*)>
inline void separable(V* d) {
  V line[A], out[N];
  for (int z = 0; z < Z; ++z)
    for (int y = 0; y < A; ++y) {
      V* row = d + (z * A + y) * A;
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

struct Tile {
  i64 n, origin[3];
};
inline Tile tile_at(const Geometry& g, i64 t) {
  Tile tile{};
  for (int axis = 2; axis >= 0; --axis) {
    tile.origin[axis] = g.tile * (t % g.tiles_axis[axis]);
    t /= g.tiles_axis[axis];
  }
  tile.n = t;
  return tile;
}

// One tile's input points, every channel, into its row of V. Inside: the tile
// reads no padding (no bounds checks).
template <class V, int A, int Z, bool Inside>
void input_tile(const Geometry& g, const float* x, float* row, i64 chunk, const Tile& tile) {
  using L = Lanes<V>;
  const i64 C = g.in_channels;
  i64 origin[3];
  for (int axis = 0; axis < 3; ++axis) origin[axis] = tile.origin[axis] - g.pad[axis];
  V d[Z * A * A];
  for (i64 c0 = 0; c0 < C; c0 += L::count) {
    const int cb = static_cast<int>(lesser(L::count, C - c0));
    for (int dz = 0; dz < Z; ++dz)
      for (int dy = 0; dy < A; ++dy) {
        const i64 z = origin[0] + dz, y = origin[1] + dy;
        const bool row_in = Inside || (z >= 0 && z < g.in[0] && y >= 0 && y < g.in[1]);
        const i64 start = (((tile.n * g.in[0] + z) * g.in[1] + y) * g.in[2] + origin[2]) * C + c0;
        for (int dx = 0; dx < A; ++dx) {
          const i64 xx = origin[2] + dx;
          d[(dz * A + dy) * A + dx] = row_in && (Inside || (xx >= 0 && xx < g.in[2])) ? L::load(x + start + dx * C, cb) : V{};
        }
      }
    separable<V, A, Z, A, input_1d<V, A>>(d);
    for (int p = 0; p < Z * A * A; ++p) L::store(row + p * chunk * C + c0, d[p], cb);
  }
}

template <class V, int A, int Z>
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
    if (inside) input_tile<V, A, Z, true>(g, x, row, chunk, tile);
    else input_tile<V, A, Z, false>(g, x, row, chunk, tile);
  }
}

template <class V, int A, int Z>
void output_tiles(const Geometry& g, const float* m, bool output_major, float* y, const float* bias, float min, float max,
                  i64 chunk_start, i64 chunk, i64 first, i64 count) {
  using L = Lanes<V>;
  constexpr int N = A - 2, P = Z * A * A, NZ = Z > 1 ? N : 1;
  const i64 O = g.out_channels;
  const V lo = L::splat(min), hi = L::splat(max);
  V d[P];
  for (i64 t = first; t < first + count; ++t) {
    const Tile tile = tile_at(g, t);
    for (i64 c0 = 0; c0 < O; c0 += L::count) {
      const int cb = static_cast<int>(lesser(L::count, O - c0));
      for (int p = 0; p < P; ++p) {
        if (output_major) {  // [P][O][chunk]: the channels a chunk apart
          const float* src = m + (p * O + c0) * chunk + (t - chunk_start);
          V v{};
          for (int i = 0; i < cb; ++i) v[i] = src[i * chunk];
          d[p] = v;
        } else {
          d[p] = L::load(m + (p * chunk + (t - chunk_start)) * O + c0, cb);
        }
      }
      separable<V, A, Z, A - 2, output_1d<V, A>>(d);
      V b{};
      if (bias) b = L::load(bias + c0, cb);
      for (int dz = 0; dz < NZ; ++dz) {
        const i64 z = tile.origin[0] + dz;
        if (z >= g.out[0]) continue;
        for (int dy = 0; dy < N; ++dy) {
          const i64 yy = tile.origin[1] + dy;
          if (yy >= g.out[1]) continue;
          for (int dx = 0; dx < N; ++dx) {
            const i64 xx = tile.origin[2] + dx;
            if (xx >= g.out[2]) continue;
            const V clamped = L::min_of(L::max_of(d[(dz * A + dy) * A + dx] + b, lo), hi);
            L::store(y + (((tile.n * g.out[0] + z) * g.out[1] + yy) * g.out[2] + xx) * O + c0, clamped, cb);
          }
        }
      }
    }
  }
}

template <class V>
void transform_input_of(const Geometry& g, const float* x, float* v, i64 chunk_start, i64 chunk, i64 first, i64 count) {
  if (g.rank == 3) input_tiles<V, 4, 4>(g, x, v, chunk_start, chunk, first, count);
  else if (g.tile == 4) input_tiles<V, 6, 1>(g, x, v, chunk_start, chunk, first, count);
  else input_tiles<V, 4, 1>(g, x, v, chunk_start, chunk, first, count);
  Lanes<V>::leave();
}

template <class V>
void transform_output_of(const Geometry& g, const float* m, bool output_major, float* y, const float* bias, float min, float max,
                         i64 chunk_start, i64 chunk, i64 first, i64 count) {
  if (g.rank == 3) output_tiles<V, 4, 4>(g, m, output_major, y, bias, min, max, chunk_start, chunk, first, count);
  else if (g.tile == 4) output_tiles<V, 6, 1>(g, m, output_major, y, bias, min, max, chunk_start, chunk, first, count);
  else output_tiles<V, 4, 1>(g, m, output_major, y, bias, min, max, chunk_start, chunk, first, count);
  Lanes<V>::leave();
}

// R rows of M by NB vectors of columns (the last holding `cols` - count (NB -
// 1) of them), over all C: R x NB accumulators, NB weight vectors and a splat
// in registers (of the 16 SIMD registers of SSE, AVX2 and wasm on x86: 11 for
// 4 x 2, 15 for 6 x 2).
template <class V, int R, int NB>
inline void gemm_block(const float* v, i64 C, const float* u, i64 ldu, float* m, i64 O, int cols) {
  using L = Lanes<V>;
  V acc[R][NB] = {};
  // Pointers stepped along C (32-bit arithmetic in wasm, where 64-bit indices
  // cost a wrap, a shift and an add per load).
  const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(C), step = static_cast<std::ptrdiff_t>(ldu);
  for (const float* const end = v + C; v != end; ++v, u += step) {
    V w[NB];
    for (int j = 0; j < NB; ++j) std::memcpy(&w[j], u + L::count * j, sizeof(V));
    for (int r = 0; r < R; ++r) {
      const V s = L::splat(v[r * row]);
      for (int j = 0; j < NB; ++j) acc[r][j] += s * w[j];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NB; ++j) {
      const int n = cols - L::count * j;
      L::store(m + r * O + L::count * j, acc[r][j], n < L::count ? n : L::count);
    }
}

template <class V, int R>
inline void gemm_rows(const float* v, i64 C, const float* u, i64 ldu, float* m, i64 O) {
  constexpr int W = Lanes<V>::count;
  for (i64 o0 = 0; o0 < O; o0 += 2 * W) {
    const int cols = static_cast<int>(lesser(2 * W, O - o0));
    if (cols > W) gemm_block<V, R, 2>(v, C, u + o0, ldu, m + o0, O, cols);
    else gemm_block<V, R, 1>(v, C, u + o0, ldu, m + o0, O, cols);
  }
}

template <class V>
void gemm_of(const Geometry& g, const float* v, const float* u, float* m, i64 chunk, i64 p, i64 first, i64 count) {
  constexpr int W = Lanes<V>::count;
  const i64 C = g.in_channels, O = g.out_channels, ldu = (O + W - 1) / W * W;
  const float* vp = v + (p * chunk + first) * C;
  const float* up = u + p * C * ldu;
  float* mp = m + (p * chunk + first) * O;
  constexpr int R = Lanes<V>::rows;
  i64 r = 0;
  for (; r + R <= count; r += R) gemm_rows<V, R>(vp + r * C, C, up, ldu, mp + r * O, O);
  for (; r < count; ++r) gemm_rows<V, 1>(vp + r * C, C, up, ldu, mp + r * O, O);
  Lanes<V>::leave();
}

}  // namespace
}  // namespace tracegraph::xnnpack::winograd
