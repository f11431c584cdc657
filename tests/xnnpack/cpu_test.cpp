// One CPU for XNNPACK and our kernels (cpu.h), and one copy of XNNPACK,
// pthreadpool and cpuinfo in a process that also holds LibTorch's.
//
// The suite runs as it is and again under TRACEGRAPH_MAX_CPU_ISA=avx2 and
// =sse2 (tests/xnnpack/CMakeLists.txt): each time the level must be the CPU's
// own, as the compiler's detection reads it, lowered to the cap, and
// XNNPACK's hardware config, our kernels' widths and the GEMM tile we
// mirror must all agree with it.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cpuinfo.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "platform/cpu.h"
#include "native/test_models.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"
#include "kernels/conv/conv_kernels.h"

// XNNPACK 2024-11-08's hardware config (src/xnnpack/hardware-config.h, not
// among its installed headers): the first field and the bits read here.
// Our copy names it with the prefix (scripts/build_xnnpack.sh).
extern "C" {
struct xnn_hardware_config;
const xnn_hardware_config* tracegraph_xnn_init_hardware_config(void);
}

namespace tracegraph::xnnpack {
namespace {

constexpr std::uint64_t kXnnAvx2 = 1u << 5, kXnnFma3 = 1u << 4, kXnnAvx512f = 1u << 11, kXnnAvx = 1u << 2;

std::uint64_t xnnpack_arch_flags() {
  const auto* config = tracegraph_xnn_init_hardware_config();
  return config ? *reinterpret_cast<const std::uint64_t*>(config) : 0;
}

// The level as the compiler's own detection (not cpuinfo) reads the CPU,
// capped as TRACEGRAPH_MAX_CPU_ISA says.
cpu::Isa expected_isa() {
  cpu::Isa own = cpu::Isa::kBaseline;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) own = cpu::Isa::kAvx512;
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) own = cpu::Isa::kAvx2;
#endif
  const char* cap = std::getenv("TRACEGRAPH_MAX_CPU_ISA");
  const std::string c = cap ? cap : "";
  if (c == "sse2") return cpu::Isa::kBaseline;
  if (c == "avx2") return std::min(own, cpu::Isa::kAvx2);
  return own;
}

// A small graph finalized and run on XNNPACK, so that XNNPACK is initialized
// and its operators and thread pool have run.
void run_a_model() {
  const auto io = tracegraph::testing::model_io("unet2d");
  native::TorchScriptOptions options;
  options.example_inputs = io.inputs;
  TracedGraph g = native::load(tracegraph::testing::model_path("unet2d.ts"), options);
  g.set_backend(make_backend({2}));
  g.finalize();
  ASSERT_EQ(g.run(io.inputs).size(), io.outputs.size());
}

TEST(Cpu, TheLevelIsTheCpusOwnUnderTheCap) {
  run_a_model();
  const cpu::Features& f = cpu::features();
  EXPECT_EQ(cpu::isa_name(f.isa), std::string(cpu::isa_name(expected_isa())));
  EXPECT_EQ(XnnpackBackend::instruction_set(), cpu::isa_name(f.isa));
  EXPECT_EQ(f.capped, f.isa < f.detected);
  EXPECT_LE(f.isa, f.detected);
}

TEST(Cpu, XnnpackSeesTheSameCpuAsOurKernels) {
  run_a_model();
  const cpu::Features& f = cpu::features();
  const std::uint64_t flags = xnnpack_arch_flags();
#if defined(__x86_64__)
  EXPECT_EQ((flags & kXnnAvx512f) != 0, f.isa >= cpu::Isa::kAvx512) << "XNNPACK's arch flags " << flags;
  EXPECT_EQ((flags & kXnnAvx2) != 0 && (flags & kXnnFma3) != 0, f.isa >= cpu::Isa::kAvx2) << "XNNPACK's arch flags " << flags;
  if (f.isa == cpu::Isa::kBaseline) {
    EXPECT_EQ(flags & kXnnAvx, 0u) << "an SSE2 cap leaves XNNPACK no AVX";
  }
  EXPECT_EQ(XnnpackBackend::gemm_tile_columns(), f.avx512f ? 32 : f.avx || f.fma ? 16 : 8);
#endif
  // Our wide kernels exactly where the level has their instructions.
  EXPECT_EQ(conv::kernels(8) != nullptr, f.isa >= cpu::Isa::kAvx2);
  EXPECT_EQ(conv::kernels(16) != nullptr, f.isa >= cpu::Isa::kAvx512);
  EXPECT_EQ(conv::widest_kernels().lanes, f.isa >= cpu::Isa::kAvx512 ? 16 : f.isa >= cpu::Isa::kAvx2 ? 8 : 4);
}

// A function's address as dladdr takes it (ISO C++ casts no function pointer to void*).
template <class F>
const void* address_of(F* f) {
  const void* p = nullptr;
  static_assert(sizeof p == sizeof f);
  std::memcpy(&p, &f, sizeof p);
  return p;
}

// Where `address` lies: the start of the image (executable or shared library) that holds it.
const void* image_of(const void* address, std::string* file = nullptr) {
  Dl_info info{};
  if (!dladdr(address, &info)) return nullptr;
  if (file) *file = info.dli_fname ? info.dli_fname : "";
  return info.dli_fbase;
}

// The functions the backend calls are ours, in the image the backend is in,
// and not LibTorch's copies of the same libraries, although the process holds
// those too (libtorch_cpu.so exports XNNPACK, pthreadpool and cpuinfo).
TEST(OneCopy, XnnpackPthreadpoolAndCpuinfoResolveInOurImage) {
  run_a_model();
  const void* ours = image_of(address_of(&XnnpackBackend::instruction_set));
  ASSERT_NE(ours, nullptr);
  const struct {
    const char* name;
    const void* address;
  } called[] = {
      {"xnn_initialize", address_of(&xnn_initialize)},
      {"xnn_run_operator", address_of(&xnn_run_operator)},
      {"xnn_create_convolution2d_nhwc_f32", address_of(&xnn_create_convolution2d_nhwc_f32)},
      {"pthreadpool_create", address_of(&pthreadpool_create)},
      {"pthreadpool_destroy", address_of(&pthreadpool_destroy)},
      {"pthreadpool_get_threads_count", address_of(&pthreadpool_get_threads_count)},
      {"cpuinfo_initialize", address_of(&cpuinfo_initialize)},
  };
  int collisions = 0;
  for (const auto& c : called) {
    std::string file;
    EXPECT_EQ(image_of(c.address, &file), ours) << c.name << " resolves in " << file;
    // LibTorch's symbol of the same name, where the process has one, is another function.
    if (void* theirs = dlsym(RTLD_DEFAULT, c.name)) {
      std::string their_file;
      EXPECT_NE(image_of(theirs, &their_file), ours) << c.name << ": the dynamic linker's " << their_file;
      ++collisions;
    }
  }
  // libtorch_cpu.so exports pthreadpool_create and friends (its own pthreadpool;
  // it keeps its XNNPACK and cpuinfo hidden): the names this test keeps apart do meet.
  EXPECT_GT(collisions, 0) << "no name of ours is also LibTorch's: this test no longer tests a collision";
  // cpuinfo's table, which the cap edits, is ours too.
  EXPECT_EQ(image_of(&cpuinfo_isa), ours);
}

}  // namespace
}  // namespace tracegraph::xnnpack
