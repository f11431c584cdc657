// Our convolution kernels for 8 lanes: kernel_table.h compiled for AVX2 and
// FMA (this file alone; x86-64 native builds). kernel_table.cpp hands them out
// only where the CPU has both.
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels/conv/kernel_table.h"

namespace tracegraph::xnnpack::conv {
namespace {

using v8 = float __attribute__((vector_size(32)));
using v8i = std::int32_t __attribute__((vector_size(32)));

template <>
struct Lanes<v8> {
  static constexpr int count = 8;
  static constexpr int rows = 6;
  static constexpr int panel_rows = 2, panel_vectors = 4;  // pointwise(): 13 registers
  static v8 splat(float x) { return v8{x, x, x, x, x, x, x, x}; }
  // The first n lanes (AVX's masked load reads no others).
  static __m256i first(int n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
  static v8 load(const float* p, int n) {
    if (n == 8) {
      v8 v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    return reinterpret_cast<v8>(_mm256_maskload_ps(p, first(n)));
  }
  // A masked store is slow on AMD's cores: whole halves where they fit.
  static void store(float* p, v8 v, int n) {
    if (n == 8) {
      std::memcpy(p, &v, sizeof v);
      return;
    }
    const __m256 all = reinterpret_cast<__m256>(v);
    __m128 half = _mm256_castps256_ps128(all);
    if (n >= 4) {
      _mm_storeu_ps(p, half);
      if (n == 4) return;
      p += 4;
      n -= 4;
      half = _mm256_extractf128_ps(all, 1);
    }
    if (n >= 2) {
      _mm_storel_pi(reinterpret_cast<__m64*>(p), half);
      if (n == 3) _mm_store_ss(p + 2, _mm_movehl_ps(half, half));
    } else {
      _mm_store_ss(p, half);
    }
  }
  static v8 max_of(v8 a, v8 b) { return select_max<v8, v8i>(a, b); }
  static v8 min_of(v8 a, v8 b) { return select_min<v8, v8i>(a, b); }
  static void leave() { _mm256_zeroupper(); }  // as table_avx512.cpp's
};

constexpr Kernels kEightLanes = kernels_of<v8>();

}  // namespace

const Kernels& avx2_kernels() { return kEightLanes; }

}  // namespace tracegraph::xnnpack::conv
