// Our convolution kernels for 16 lanes: kernel_table.h compiled for AVX-512F
// (this file alone; x86-64 native builds). kernel_table.cpp hands them out only
// where the CPU has it.
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels/conv/kernel_table.h"

namespace tracegraph::xnnpack::conv {
namespace {

using v16 = float __attribute__((vector_size(64)));
using v16i = std::int32_t __attribute__((vector_size(64)));

template <>
struct Lanes<v16> {
  static constexpr int count = 16;
  static constexpr int rows = 8;  // 8 x 2 accumulators of AVX-512's 32 registers
  static constexpr int panel_rows = 8, panel_vectors = 2;  // pointwise(): as gemm()
  static v16 splat(float x) { return reinterpret_cast<v16>(_mm512_set1_ps(x)); }
  // The first n lanes through masked moves (no others read or written).
  static __mmask16 first(int n) { return static_cast<__mmask16>((1u << n) - 1); }
  static v16 load(const float* p, int n) {
    if (n == 16) {
      v16 v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    return reinterpret_cast<v16>(_mm512_maskz_loadu_ps(first(n), p));
  }
  static void store(float* p, v16 v, int n) {
    if (n == 16) std::memcpy(p, &v, sizeof v);
    else _mm512_mask_storeu_ps(p, first(n), reinterpret_cast<__m512>(v));
  }
  static v16 max_of(v16 a, v16 b) { return select_max<v16, v16i>(a, b); }
  static v16 min_of(v16 a, v16 b) { return select_min<v16, v16i>(a, b); }
  // The upper halves clean for the SSE code after us: GCC leaves them dirty
  // where a kernel returns through a helper, and SSE code after that ran 3-4x
  // slower on Zen 4 (a SiLU after our depthwise convolution).
  static void leave() { _mm256_zeroupper(); }
};

constexpr Kernels kSixteenLanes = kernels_of<v16>();

}  // namespace

const Kernels& avx512_kernels() { return kSixteenLanes; }

}  // namespace tracegraph::xnnpack::conv
