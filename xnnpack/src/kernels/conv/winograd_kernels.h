// Our vector kernels (winograd.h's Kernels): Winograd's per-tile input and
// output transforms, our GEMM, the GEMM as a 1x1 convolution, and the 3x3
// depthwise convolution, for a vector type V of Lanes<V>::count floats.
// Included by winograd.cpp (4 lanes: SSE natively, wasm SIMD in the browser),
// winograd_avx2.cpp (8 lanes, compiled for AVX2 and FMA) and
// winograd_avx512.cpp (16 lanes), each of which specializes Lanes for its type. Channels are innermost, so a vector holds
// `count` channels of one pixel; a channel count that is not a multiple of it
// loads and stores its last group partly.
//
// Everything here has internal linkage (an unnamed namespace in a header, on
// purpose): the AVX2 file's copy of a helper must never be the one the linker
// keeps for the baseline file. For the same reason this uses no std::
// templates.
#pragma once

#include <cstring>

#include "kernels/conv/winograd.h"

namespace tracegraph::xnnpack::winograd {
namespace {

// count; rows, gemm()'s rows per block; panel_rows and panel_vectors,
// pointwise()'s block; V splat(float); V load(const float*, int n) and
// store(float*, V, int n) of the first n lanes (zeros past them); max_of and
// min_of with std::max's and std::min's rule per lane; leave(), called as each
// kernel returns (wider vectors clear their upper halves there).
template <class V>
struct Lanes;

inline i64 lesser(i64 a, i64 b) { return a < b ? a : b; }
inline i64 greater(i64 a, i64 b) { return a < b ? b : a; }

// a < b ? b : a per lane (std::max's rule, NaN in a kept), and its mirror, as
// bit selects over I, V's lanes as integers: for the Lanes of wider vectors
// (simd.h does the same for 4).
template <class V, class I>
inline V select_max(V a, V b) {
  const I less = a < b;
  return reinterpret_cast<V>((reinterpret_cast<I>(a) & ~less) | (reinterpret_cast<I>(b) & less));
}
template <class V, class I>
inline V select_min(V a, V b) {
  const I greater = b < a;
  return reinterpret_cast<V>((reinterpret_cast<I>(a) & ~greater) | (reinterpret_cast<I>(b) & greater));
}

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

// Our GEMM as a 1x1 convolution (Kernels::pointwise): R rows by NB vectors of
// one panel (the last holding `cols` - count (NB - 1) of its columns), the
// accumulators starting at the bias and clamped on the way out.
template <class V, int R, int NB>
inline void pointwise_block(const float* x, i64 C, const float* panel, i64 ldp, const float* bias, float* y, i64 O, int cols, V lo, V hi) {
  using L = Lanes<V>;
  V acc[R][NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    V b;
    std::memcpy(&b, bias + L::count * j, sizeof(V));
    for (int r = 0; r < R; ++r) acc[r][j] = b;
  }
  // Pointers stepped along C, as in gemm_block().
  const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(C), step = static_cast<std::ptrdiff_t>(ldp);
  for (const float* const end = x + C; x != end; ++x, panel += step) {
    V w[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) std::memcpy(&w[j], panel + j * L::count, sizeof(V));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const V s = L::splat(x[r * row]);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) acc[r][j] += s * w[j];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NB; ++j) {
      const int n = cols - L::count * j;
      L::store(y + r * O + L::count * j, L::min_of(L::max_of(acc[r][j], lo), hi), n < L::count ? n : L::count);
    }
}

// As many vectors as the panel's `cols` need (a panel is Lanes::panel_vectors wide).
template <class V, int R>
inline void pointwise_rows(const float* x, i64 C, const float* panel, const float* bias, float* y, i64 O, int cols, V lo, V hi) {
  using L = Lanes<V>;
  constexpr i64 ldp = L::panel_vectors * L::count;
  static_assert(L::panel_vectors >= 1 && L::panel_vectors <= 4);
  switch ((cols + L::count - 1) / L::count) {
    case 1: return pointwise_block<V, R, 1>(x, C, panel, ldp, bias, y, O, cols, lo, hi);
    case 2: return pointwise_block<V, R, (L::panel_vectors < 2 ? 1 : 2)>(x, C, panel, ldp, bias, y, O, cols, lo, hi);
    case 3: return pointwise_block<V, R, (L::panel_vectors < 3 ? 1 : 3)>(x, C, panel, ldp, bias, y, O, cols, lo, hi);
    default: return pointwise_block<V, R, L::panel_vectors>(x, C, panel, ldp, bias, y, O, cols, lo, hi);
  }
}

template <class V>
void pointwise_of(const Pointwise& p, const float* x, const float* packed, float* y, i64 first, i64 count, i64 first_panel, i64 panels) {
  using L = Lanes<V>;
  constexpr int R = L::panel_rows, P = L::panel_vectors * L::count;
  const i64 C = p.in_channels, O = p.out_channels;
  const V lo = L::splat(p.min), hi = L::splat(p.max);
  const float* bias = packed + (O + P - 1) / P * P * C;
  for (i64 q = first_panel; q < first_panel + panels; ++q) {
    const float* panel = packed + q * P * C;
    const int cols = static_cast<int>(lesser(P, O - q * P));
    const float* xr = x + first * C;
    float* yr = y + first * O + q * P;
    i64 r = 0;
    for (; r + R <= count; r += R) pointwise_rows<V, R>(xr + r * C, C, panel, bias + q * P, yr + r * O, O, cols, lo, hi);
    for (; r < count; ++r) pointwise_rows<V, 1>(xr + r * C, C, panel, bias + q * P, yr + r * O, O, cols, lo, hi);
  }
  Lanes<V>::leave();
}

// Kernels::direct: pointwise_block()'s GEMM read straight off the input
// (no unfolded copy) for R pixels `step` floats apart, each reading `runs`
// runs of L contiguous floats at `offsets` from its own start. (A 1x1
// convolution is one run of C, but pointwise_block() stays apart: through
// this loop over runs, V8 ran mobilenet's 1x1 layers 5-8% slower.)
template <class V, int R, int NB>
inline void direct_block(const float* x, i64 step, const i64* offsets, i64 runs, i64 L, const float* panel, i64 ldp, const float* bias, float* y,
                         i64 O, int cols, V lo, V hi) {
  using L_ = Lanes<V>;
  V acc[R][NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    V b;
    std::memcpy(&b, bias + L_::count * j, sizeof(V));
    for (int r = 0; r < R; ++r) acc[r][j] = b;
  }
  const std::ptrdiff_t pixel = static_cast<std::ptrdiff_t>(step), next = static_cast<std::ptrdiff_t>(ldp);
  for (i64 t = 0; t < runs; ++t) {
    const float* xt = x + offsets[t];
    for (const float* const end = xt + L; xt != end; ++xt, panel += next) {
      V w[NB];
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) std::memcpy(&w[j], panel + j * L_::count, sizeof(V));
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const V s = L_::splat(xt[r * pixel]);
#pragma GCC unroll 4
        for (int j = 0; j < NB; ++j) acc[r][j] += s * w[j];
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NB; ++j) {
      const int n = cols - L_::count * j;
      L_::store(y + r * O + L_::count * j, L_::min_of(L_::max_of(acc[r][j], lo), hi), n < L_::count ? n : L_::count);
    }
}

template <class V, int R>
inline void direct_rows(const float* x, i64 step, const i64* offsets, i64 runs, i64 L, const float* panel, const float* bias, float* y, i64 O,
                        int cols, V lo, V hi) {
  using L_ = Lanes<V>;
  constexpr i64 ldp = L_::panel_vectors * L_::count;
  switch ((cols + L_::count - 1) / L_::count) {
    case 1: return direct_block<V, R, 1>(x, step, offsets, runs, L, panel, ldp, bias, y, O, cols, lo, hi);
    case 2: return direct_block<V, R, (L_::panel_vectors < 2 ? 1 : 2)>(x, step, offsets, runs, L, panel, ldp, bias, y, O, cols, lo, hi);
    case 3: return direct_block<V, R, (L_::panel_vectors < 3 ? 1 : 3)>(x, step, offsets, runs, L, panel, ldp, bias, y, O, cols, lo, hi);
    default: return direct_block<V, R, L_::panel_vectors>(x, step, offsets, runs, L, panel, ldp, bias, y, O, cols, lo, hi);
  }
}

template <class V>
void direct_of(const Pointwise& p, const float* x, i64 step, const i64* offsets, i64 runs, i64 L, const float* packed, float* y, i64 count) {
  using L_ = Lanes<V>;
  constexpr int R = L_::panel_rows, P = L_::panel_vectors * L_::count;
  const i64 C = p.in_channels, O = p.out_channels;  // C = runs * L
  const V lo = L_::splat(p.min), hi = L_::splat(p.max);
  const float* bias = packed + (O + P - 1) / P * P * C;
  for (i64 q = 0; q < (O + P - 1) / P; ++q) {
    const float* panel = packed + q * P * C;
    const int cols = static_cast<int>(lesser(P, O - q * P));
    i64 r = 0;
    for (; r + R <= count; r += R) direct_rows<V, R>(x + r * step, step, offsets, runs, L, panel, bias + q * P, y + r * O + q * P, O, cols, lo, hi);
    for (; r < count; ++r) direct_rows<V, 1>(x + r * step, step, offsets, runs, L, panel, bias + q * P, y + r * O + q * P, O, cols, lo, hi);
  }
  Lanes<V>::leave();
}

// A 3x3 depthwise convolution (Kernels::depthwise, kernels.h's Depthwise):
// one output row's pixels [from, to) for the channels [c0, c0 + count) (the
// first cb of them). Inside: every tap of these pixels reads the input (no
// checks).
template <class V, bool Full, bool Inside>
void depthwise_pixels(const float* const rows[3], float* out, const V* k, V bias, const kernels::Depthwise& d, i64 c0, int cb, i64 from,
                      i64 to, V lo, V hi) {
  using L = Lanes<V>;
  const i64 C = d.channels;
  const int n = Full ? L::count : cb;
  for (i64 ox = from; ox < to; ++ox) {
    V acc = bias;
    const i64 ix0 = ox * d.stride_w - d.pad_w;
    for (int ky = 0; ky < 3; ++ky) {
      if (!rows[ky]) continue;
      for (int kx = 0; kx < 3; ++kx) {
        const i64 ix = ix0 + kx;
        if (!Inside && (ix < 0 || ix >= d.in_w)) continue;
        acc += L::load(rows[ky] + ix * C + c0, n) * k[ky * 3 + kx];
      }
    }
    L::store(out + ox * C + c0, L::min_of(L::max_of(acc, lo), hi), n);
  }
}

// The common case of depthwise_pixels(): whole vectors of channels, all
// three rows and columns inside, with pointers stepped along the row (32-bit
// arithmetic in wasm) and the three kernel rows summed apart (shorter
// dependency chains).
template <class V>
void depthwise_inner(const float* const rows[3], float* out, const V* k, V bias, const kernels::Depthwise& d, i64 c0, i64 from, i64 to, V lo,
                     V hi) {
  if (from >= to) return;  // (the pointers below would start past the row)
  using L = Lanes<V>;
  constexpr int W = L::count;
  const std::ptrdiff_t C = static_cast<std::ptrdiff_t>(d.channels), step = static_cast<std::ptrdiff_t>(d.stride_w) * C;
  const std::ptrdiff_t start = static_cast<std::ptrdiff_t>(from * d.stride_w - d.pad_w) * C + static_cast<std::ptrdiff_t>(c0);
  const float* p0 = rows[0] + start;
  const float* p1 = rows[1] + start;
  const float* p2 = rows[2] + start;
  float* o = out + static_cast<std::ptrdiff_t>(from) * C + static_cast<std::ptrdiff_t>(c0);
  i64 ox = from;
  if (d.stride_w == 1) {
    // Two pixels at a time: neighbours share two of their three columns, so
    // 12 loads for 18 multiply-adds (measured 10% faster in V8).
    for (; ox + 2 <= to; ox += 2, p0 += 2 * C, p1 += 2 * C, p2 += 2 * C, o += 2 * C) {
      V a0 = bias, a1 = bias, t;
      const float* const p[3] = {p0, p1, p2};
      for (int ky = 0; ky < 3; ++ky) {
        const V* kr = k + 3 * ky;
        t = L::load(p[ky], W);
        a0 += t * kr[0];
        t = L::load(p[ky] + C, W);
        a0 += t * kr[1];
        a1 += t * kr[0];
        t = L::load(p[ky] + 2 * C, W);
        a0 += t * kr[2];
        a1 += t * kr[1];
        t = L::load(p[ky] + 3 * C, W);
        a1 += t * kr[2];
      }
      L::store(o, L::min_of(L::max_of(a0, lo), hi), W);
      L::store(o + C, L::min_of(L::max_of(a1, lo), hi), W);
    }
  }
  for (; ox < to; ++ox, p0 += step, p1 += step, p2 += step, o += C) {
    const V a = bias + L::load(p0, W) * k[0] + L::load(p0 + C, W) * k[1] + L::load(p0 + 2 * C, W) * k[2];
    const V b = L::load(p1, W) * k[3] + L::load(p1 + C, W) * k[4] + L::load(p1 + 2 * C, W) * k[5];
    const V c = L::load(p2, W) * k[6] + L::load(p2 + C, W) * k[7] + L::load(p2 + 2 * C, W) * k[8];
    L::store(o, L::min_of(L::max_of(a + b + c, lo), hi), W);
  }
}

// Output pixels [from, to) of a row for channels [c0, c0 + cb): those in
// [inner_from, inner_to) read no padding along the row. The nine weight
// vectors and the bias stay in registers along the row.
template <class V, bool Full>
void depthwise_span(const float* const rows[3], float* out, const float* weights, const float* bias, const kernels::Depthwise& d, i64 c0,
                    int cb, i64 from, i64 inner_from, i64 inner_to, i64 to, V lo, V hi) {
  using L = Lanes<V>;
  const i64 padded = (d.channels + L::count - 1) / L::count * L::count;  // depthwise_padded(), kept out of this header (linkage)
  V k[9];
  for (int t = 0; t < 9; ++t) k[t] = L::load(weights + t * padded + c0, L::count);
  const V b = L::load(bias + c0, L::count);
  depthwise_pixels<V, Full, false>(rows, out, k, b, d, c0, cb, from, inner_from, lo, hi);
  if (Full && rows[0] && rows[1] && rows[2]) depthwise_inner<V>(rows, out, k, b, d, c0, inner_from, inner_to, lo, hi);
  else depthwise_pixels<V, Full, true>(rows, out, k, b, d, c0, cb, inner_from, inner_to, lo, hi);
  depthwise_pixels<V, Full, false>(rows, out, k, b, d, c0, cb, inner_to, to, lo, hi);
}

template <class V>
void depthwise_of(const float* x, float* y, const float* weights, const float* bias, const kernels::Depthwise& d, float min, float max,
                  i64 first, i64 count) {
  using L = Lanes<V>;
  constexpr int W = L::count;
  const i64 C = d.channels;
  const V lo = L::splat(min), hi = L::splat(max);
  // The output columns whose three taps all read the input: [inner_from, inner_to).
  const i64 inner_from = lesser(d.out_w, (d.pad_w + d.stride_w - 1) / d.stride_w);
  const i64 last = d.in_w - 3 + d.pad_w;  // the last ox with ox * stride <= last
  const i64 inner_to = greater(inner_from, last < 0 ? 0 : lesser(d.out_w, last / d.stride_w + 1));
  for (i64 row = first; row < first + count; ++row) {
    const i64 n = row / d.out_h, oy = row % d.out_h;
    const float* rows[3];
    for (int ky = 0; ky < 3; ++ky) {
      const i64 iy = oy * d.stride_h - d.pad_h + ky;
      rows[ky] = iy >= 0 && iy < d.in_h ? x + (n * d.in_h + iy) * d.in_w * C : nullptr;
    }
    float* out = y + row * d.out_w * C;
    i64 c0 = 0;
    for (; c0 + W <= C; c0 += W) depthwise_span<V, true>(rows, out, weights, bias, d, c0, W, 0, inner_from, inner_to, d.out_w, lo, hi);
    if (c0 < C) depthwise_span<V, false>(rows, out, weights, bias, d, c0, static_cast<int>(C - c0), 0, inner_from, inner_to, d.out_w, lo, hi);
  }
  Lanes<V>::leave();
}

template <class V>
constexpr Kernels kernels_of() {
  return {Lanes<V>::count, Lanes<V>::rows, Lanes<V>::panel_vectors * Lanes<V>::count, &transform_input_of<V>, &transform_output_of<V>, &gemm_of<V>, &pointwise_of<V>, &direct_of<V>, &depthwise_of<V>};
}

}  // namespace
}  // namespace tracegraph::xnnpack::winograd
