// Our GEMM as a 1x1 convolution (conv::Kernels::pointwise; pointwise.h)
// (kernel_table.h; lanes.h says how these headers are compiled).
#pragma once

#include "kernels/conv/lanes.h"
#include "kernels/conv/pointwise.h"

namespace tracegraph::xnnpack::pointwise {
namespace {

using conv::Lanes;
using conv::lesser;

// Our GEMM as a 1x1 convolution (conv::Kernels::pointwise): R rows by NB vectors of
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
void pointwise_of(const Conv& p, const float* x, const float* packed, float* y, i64 first, i64 count, i64 first_panel, i64 panels) {
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

}  // namespace
}  // namespace tracegraph::xnnpack::pointwise
