// The vector vocabulary of our convolution kernels (conv_kernels.h's Kernels),
// for a vector type V of Lanes<V>::count floats. kernel_table.h's kernels
// include it; kernel_table.cpp (4 lanes: SSE natively, wasm SIMD in the
// browser), table_avx2.cpp (8 lanes, compiled for AVX2 and FMA) and
// table_avx512.cpp (16 lanes) each specialize Lanes for their type. Channels
// are innermost, so a vector holds `count` channels of one pixel; a channel
// count that is not a multiple of it loads and stores its last group partly.
//
// Everything in these headers has internal linkage (an unnamed namespace in a
// header, on purpose): the AVX2 file's copy of a helper must never be the one
// the linker keeps for the baseline file. For the same reason they use no
// std:: templates.
#pragma once

#include <cstring>

#include "kernels/conv/conv_kernels.h"

namespace tracegraph::xnnpack::conv {
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

}  // namespace
}  // namespace tracegraph::xnnpack::conv
