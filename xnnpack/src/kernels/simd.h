// Four floats at a time for our kernels (conv/winograd.cpp, layout.cpp): GCC's and
// Clang's vector extension, SSE natively and wasm SIMD in the browser. Channels
// are innermost, so a vector holds four channels of one pixel; a channel count
// that is not a multiple of 4 loads and stores its last group partly.
#pragma once

#include <cstdint>
#include <cstring>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace tracegraph::xnnpack::simd {

using v4 = float __attribute__((vector_size(16)));
using v4i = std::int32_t __attribute__((vector_size(16)));

inline v4 splat(float x) { return v4{x, x, x, x}; }  // not v4{} + x: -0 + 0 is not -0

// a < b ? b : a per lane (std::max's rule, NaN in a kept), and its mirror:
// wasm's pseudo-minimum and -maximum, one instruction each (a compare and a
// select natively, which compilers make one too).
inline v4 max_of(v4 a, v4 b) {
#ifdef __wasm_simd128__
  return reinterpret_cast<v4>(wasm_f32x4_pmax(reinterpret_cast<v128_t>(a), reinterpret_cast<v128_t>(b)));
#else
  const v4i less = a < b;
  return reinterpret_cast<v4>((reinterpret_cast<v4i>(a) & ~less) | (reinterpret_cast<v4i>(b) & less));
#endif
}
inline v4 min_of(v4 a, v4 b) {
#ifdef __wasm_simd128__
  return reinterpret_cast<v4>(wasm_f32x4_pmin(reinterpret_cast<v128_t>(a), reinterpret_cast<v128_t>(b)));
#else
  const v4i greater = b < a;
  return reinterpret_cast<v4>((reinterpret_cast<v4i>(a) & ~greater) | (reinterpret_cast<v4i>(b) & greater));
#endif
}

// The first n (1 to 4) floats; constant sizes throughout: a memcpy of a
// variable size is a call in wasm.
inline v4 load(const float* p, int n) {
  if (n == 4) {
    v4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  if (n == 3) return v4{p[0], p[1], p[2], 0.0f};
  if (n == 2) return v4{p[0], p[1], 0.0f, 0.0f};
  return v4{p[0], 0.0f, 0.0f, 0.0f};
}
inline v4 load(const float* p) { return load(p, 4); }
inline void store(float* p, v4 v, int n) {
  if (n == 4) {
    std::memcpy(p, &v, sizeof v);
    return;
  }
  p[0] = v[0];
  if (n > 1) p[1] = v[1];
  if (n > 2) p[2] = v[2];
}

}  // namespace tracegraph::xnnpack::simd
