// The thread pools XNNPACK runs on, shared by every graph in the process.
#pragma once

#include <pthreadpool.h>

#include <memory>

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
