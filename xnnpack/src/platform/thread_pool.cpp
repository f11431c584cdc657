#include "platform/thread_pool.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "tracegraph/error.h"

namespace tracegraph::xnnpack::detail {
namespace {

struct PoolDeleter {
  void operator()(pthreadpool* p) const { pthreadpool_destroy(p); }
};

#if defined(__EMSCRIPTEN_PTHREADS__)
#ifndef TRACEGRAPH_WASM_WORKERS
#error "the threaded wasm build defines TRACEGRAPH_WASM_WORKERS as its PTHREAD_POOL_SIZE"
#endif
constexpr int kWorkers = TRACEGRAPH_WASM_WORKERS;
#endif

}  // namespace

int default_threads() {
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
#if defined(__EMSCRIPTEN_PTHREADS__)
  cores = std::min(cores, kWorkers + 1);
#endif
  return std::min(cores, kMaxThreads);
}

std::shared_ptr<pthreadpool> shared_pool(int threads) {
  if (threads < 2 || threads > kMaxThreads)
    fail(ErrorCode::kInvalidArgument, "xnnpack: a pool of " + std::to_string(threads) + " threads: expected 2 to " + std::to_string(kMaxThreads));
  static std::mutex mutex;
  static std::map<int, std::weak_ptr<pthreadpool>> pools;  // by thread count
  std::lock_guard lock(mutex);
  std::weak_ptr<pthreadpool>& slot = pools[threads];
  if (auto pool = slot.lock()) return pool;
#if defined(__EMSCRIPTEN_PTHREADS__)
  // Each pool's threads but the caller's are workers.
  int in_use = 0;
  std::string users;
  for (const auto& [count, pool] : pools) {
    if (pool.expired()) continue;
    in_use += count - 1;
    users += (users.empty() ? "" : ", ") + std::to_string(count);
  }
  if (in_use + threads - 1 > kWorkers)
    fail(ErrorCode::kLimitExceeded,
         "xnnpack: " + std::to_string(threads) + " threads need " + std::to_string(threads - 1) + " workers, and " +
             std::to_string(kWorkers - in_use) + " of this build's " + std::to_string(kWorkers) +
             " are free (live graphs run on pools of " + (users.empty() ? std::string("none") : users) +
             " threads): finalize with as many threads as another live graph (they share its pool), with fewer, "
             "or dispose graphs first");
#endif
  std::shared_ptr<pthreadpool> pool(pthreadpool_create(static_cast<std::size_t>(threads)), PoolDeleter{});
  if (!pool.get()) fail(ErrorCode::kOutOfMemory, "xnnpack: could not create a pool of " + std::to_string(threads) + " threads");
  slot = pool;
  return pool;
}

}  // namespace tracegraph::xnnpack::detail
