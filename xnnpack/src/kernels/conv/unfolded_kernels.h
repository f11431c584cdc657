// Our GEMM read straight off a convolution's input, unfolded in place
// (conv::Kernels::direct, unfolded::run(); unfolded.h) (kernel_table.h; lanes.h says how
// these headers are compiled).
#pragma once

#include "kernels/conv/lanes.h"
#include "kernels/conv/unfolded.h"

namespace tracegraph::xnnpack::unfolded {
namespace {

using conv::Lanes;
using conv::lesser;

// conv::Kernels::direct: pointwise::pointwise_block()'s GEMM read straight off the input
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
void direct_of(const pointwise::Conv& p, const float* x, i64 step, const i64* offsets, i64 runs, i64 L, const float* packed, float* y, i64 count) {
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

}  // namespace
}  // namespace tracegraph::xnnpack::unfolded
