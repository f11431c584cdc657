// The thread pools XNNPACK runs on, shared by every graph in the process.
#pragma once

#include <pthreadpool.h>
// Ours, renamed (scripts/build_xnnpack.sh), not LibTorch's header of the same
// name, which would have this file call LibTorch's copy.
#ifndef TRACEGRAPH_XNNPACK_SYMBOLS
#error "pthreadpool.h is not tracegraph's own: put tracegraph_xnnpack_deps' include directory before LibTorch's"
#endif

#include <cstdint>
#include <memory>

namespace tracegraph::xnnpack {

// The flags our kernels run on a pool with: denormals flushed to zero, as
// XNNPACK runs its operators (where the CPU has the mode: x86's FTZ and DAZ,
// Arm's FZ). Denormal inputs are a slow path in hardware: our 4-lane depthwise
// kernel took 0.081 ms on them against 0.029 on normal numbers natively.
inline constexpr std::uint32_t kNoDenormals = PTHREADPOOL_FLAG_DISABLE_DENORMALS;

}  // namespace tracegraph::xnnpack

namespace tracegraph::xnnpack::detail {

// A pool of `threads` threads (the caller's included), shared by every live
// graph that asks for the same number and destroyed with the last of them.
// Graphs on one pool take turns (pthreadpool runs one job at a time).
//
// The threaded wasm build starts a fixed number of workers with the module
// (TRACEGRAPH_WASM_WORKERS, Emscripten's PTHREAD_POOL_SIZE): a pool that would
// need more workers than are free fails with kLimitExceeded, naming what is in
// use, instead of waiting forever for a worker that cannot start while the
// caller blocks. Natively, `threads` is capped at kMaxThreads.
std::shared_ptr<pthreadpool> shared_pool(int threads);

inline constexpr int kMaxThreads = 256;

// Threads for Options::threads == 0: the machine's cores, in threaded wasm at
// most the workers the build starts plus the caller.
int default_threads();

}  // namespace tracegraph::xnnpack::detail
