// One detection of the CPU for XNNPACK and our kernels (cpu.h).
#include "platform/cpu.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "tracegraph/error.h"

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)
#define TRACEGRAPH_CPU_X86 1
// Our copy of cpuinfo (scripts/build_xnnpack.sh), the one XNNPACK reads.
#include <cpuinfo.h>
#ifndef TRACEGRAPH_XNNPACK_SYMBOLS
#error "cpuinfo.h is not tracegraph's own (LibTorch and Debian ship one): put tracegraph_xnnpack_deps' include directory first"
#endif
#endif

namespace tracegraph::xnnpack::cpu {
namespace {

constexpr const char* kCapVariable = "TRACEGRAPH_MAX_CPU_ISA";

// The cap TRACEGRAPH_MAX_CPU_ISA names; kAvx512 (no cap) where it is unset or empty.
Isa read_cap() {
  const char* value = std::getenv(kCapVariable);
  if (!value || !*value) return Isa::kAvx512;
  std::string name(value);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "sse2") return Isa::kBaseline;
  if (name == "avx2") return Isa::kAvx2;
  if (name == "avx512") return Isa::kAvx512;
  fail(ErrorCode::kInvalidArgument, std::string(kCapVariable) + "='" + value +
                                        "' names no instruction set: use sse2, avx2 or avx512 (or leave it unset)");
}

#ifdef TRACEGRAPH_CPU_X86
// Clears from cpuinfo's table every instruction above `cap`: the inline
// cpuinfo_has_x86_*() that XNNPACK's hardware config calls read this table.
void clear_above(Isa cap) {
  cpuinfo_x86_isa& f = cpuinfo_isa;
  if (cap < Isa::kAvx512) {
    f.avx512f = f.avx512pf = f.avx512er = f.avx512cd = f.avx512dq = f.avx512bw = f.avx512vl = false;
    f.avx512ifma = f.avx512vbmi = f.avx512vbmi2 = f.avx512bitalg = f.avx512vpopcntdq = false;
    f.avx512vnni = f.avx512bf16 = f.avx512fp16 = f.avx512vp2intersect = f.avx512_4vnniw = f.avx512_4fmaps = false;
    f.avx10_1 = f.avx10_2 = false;
    f.amx_bf16 = f.amx_tile = f.amx_int8 = f.amx_fp16 = false;
    // VEX-encoded extensions newer than AVX2 (XNNPACK's avxvnni kernels):
    // a CPU of the AVX2 level need not have them.
    f.avxvnni = f.avx_vnni_int8 = f.avx_vnni_int16 = f.avx_ne_convert = false;
  }
  if (cap < Isa::kAvx2) {
    f.sse3 = f.ssse3 = f.sse4_1 = f.sse4_2 = f.sse4a = false;
    f.avx = f.fma3 = f.fma4 = f.xop = f.f16c = f.avx2 = false;
  }
}
#endif

Features detect() {
  Features f;
  const Isa cap = read_cap();
#ifdef TRACEGRAPH_CPU_X86
  // Where cpuinfo cannot read the CPU, every flag stays false and
  // xnn_initialize() fails with a clear error (init_xnnpack()).
  if (!cpuinfo_initialize()) return f;
  f.detected = cpuinfo_has_x86_avx512f()                          ? Isa::kAvx512
               : cpuinfo_has_x86_avx2() && cpuinfo_has_x86_fma3() ? Isa::kAvx2
                                                                  : Isa::kBaseline;
  f.isa = f.detected;
  if (cap < f.detected) {
    clear_above(cap);
    f.isa = cap;
    f.capped = true;
  }
  f.avx = cpuinfo_has_x86_avx();
  f.fma = cpuinfo_has_x86_fma3();
  f.avx2 = cpuinfo_has_x86_avx2();
  f.avx512f = cpuinfo_has_x86_avx512f();
#else
  (void)cap;  // read all the same: a misspelt value is an error everywhere
#endif
  return f;
}

}  // namespace

const Features& features() {
  static const Features f = detect();
  return f;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    case Isa::kBaseline: break;
  }
#if defined(__x86_64__) || defined(__i386__)
  return "sse2";
#elif defined(__EMSCRIPTEN__)
  return "wasm-simd";
#elif defined(__aarch64__) || defined(__arm__)
  return "neon";
#else
  return "scalar";
#endif
}

}  // namespace tracegraph::xnnpack::cpu
