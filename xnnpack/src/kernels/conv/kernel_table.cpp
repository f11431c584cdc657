// The kernels' table for 4 lanes (SSE natively, wasm SIMD in the browser),
// and the choice of a table by width where the CPU has the instructions.
#include "kernels/conv/kernel_table.h"

#include "kernels/simd.h"
#include "platform/cpu.h"

namespace tracegraph::xnnpack::conv {

#ifdef TRACEGRAPH_WINOGRAD_X86
// table_avx2.cpp's 8-lane kernels, to call only where the CPU has AVX2 and
// FMA; table_avx512.cpp's 16-lane ones, only where it has AVX-512F.
const Kernels& avx2_kernels();
const Kernels& avx512_kernels();
#endif

namespace {

template <>
struct Lanes<simd::v4> {
  static constexpr int count = 4;
  static constexpr int rows = 4;
  // pointwise(): 2 rows by 4 vectors (8 accumulators, 4 weight vectors and a
  // splat): fewer splats per multiply-add than 4 x 2, faster in V8.
  static constexpr int panel_rows = 2, panel_vectors = 4;
  static simd::v4 splat(float x) { return simd::splat(x); }
  static simd::v4 load(const float* p, int n) { return simd::load(p, n); }
  static void store(float* p, simd::v4 v, int n) { simd::store(p, v, n); }
  static simd::v4 max_of(simd::v4 a, simd::v4 b) { return simd::max_of(a, b); }
  static simd::v4 min_of(simd::v4 a, simd::v4 b) { return simd::min_of(a, b); }
  static void leave() {}
};

constexpr Kernels kFourLanes = kernels_of<simd::v4>();

}  // namespace

const Kernels* kernels(int lanes) {
  if (lanes == 4) return &kFourLanes;
#ifdef TRACEGRAPH_WINOGRAD_X86
  // As XNNPACK sees the CPU (cpu.h: one detection, under the same cap).
  const cpu::Features& cpu = cpu::features();
  if (lanes == 8 && cpu.avx2 && cpu.fma) return &avx2_kernels();
  if (lanes == 16 && cpu.avx512f) return &avx512_kernels();
#endif
  return nullptr;
}

const Kernels& widest_kernels() {
  for (int lanes : {16, 8})
    if (const Kernels* k = kernels(lanes)) return *k;
  return kFourLanes;
}

}  // namespace tracegraph::xnnpack::conv
