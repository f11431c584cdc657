// The instructions the XNNPACK backend's kernels may use, XNNPACK's and ours,
// decided once per process from one detection: our own copy of cpuinfo,
// capped by the environment variable TRACEGRAPH_MAX_CPU_ISA. XNNPACK's
// hardware config reads the same cpuinfo tables, so it and our wide kernels
// (winograd.cpp's 8 and 16 lanes) never disagree about the CPU.
#pragma once

#include <string>

namespace tracegraph::xnnpack::cpu {

// The levels of x86-64 our kernels tell apart, in order. Elsewhere (wasm
// SIMD, Arm NEON) there is only kBaseline.
//   kBaseline: SSE2, what every x86-64 CPU has;
//   kAvx2:     AVX2 and FMA3 (and AVX, F16C below them);
//   kAvx512:   AVX-512F (and BW, DQ, VL where the CPU has them).
enum class Isa { kBaseline, kAvx2, kAvx512 };

struct Features {
  Isa detected = Isa::kBaseline;  // the CPU's own level
  Isa isa = Isa::kBaseline;       // what the kernels use: detected, or the cap below it
  bool capped = false;            // TRACEGRAPH_MAX_CPU_ISA lowered `isa`
  // The instructions as XNNPACK sees them, after the cap.
  bool avx = false, fma = false, avx2 = false, avx512f = false;
};

// Detected on the first call (thread-safe). init_xnnpack() calls it before
// xnn_initialize(): under a cap, the instructions above it are cleared from
// cpuinfo's table first, so XNNPACK picks its kernels for the capped CPU.
// kInvalidArgument where TRACEGRAPH_MAX_CPU_ISA is set to no level's name.
const Features& features();

// "sse2", "avx2", "avx512"; for kBaseline elsewhere, "wasm-simd" or "neon".
const char* isa_name(Isa isa);

}  // namespace tracegraph::xnnpack::cpu
