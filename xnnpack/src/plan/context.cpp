// The planning context's own state: the pool of threads and the memory budget.
#include "plan/context.h"

namespace tracegraph::xnnpack {

Context::Context(const Options& options) : options_(options) {
  init_xnnpack();
  int threads = options.threads;
  if (threads < 0) fail(ErrorCode::kInvalidArgument, "xnnpack: threads must be 0 (the machine's cores) or more, given " + std::to_string(threads));
  if (threads == 0) threads = detail::default_threads();
  if (!has_threads()) threads = 1;
  if (threads > 1) pool_ = detail::shared_pool(threads);
  threads_ = threads;
}

std::size_t Context::memory_budget() const {
  if (options_.memory_budget) return options_.memory_budget;
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
  // Natively, the machine's memory: beyond it an allocation may "succeed"
  // (overcommit) and the process dies when it touches the pages.
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
#endif
  return sizeof(void*) == 4 ? (std::size_t{1} << 31) : (std::size_t{1} << 46);
}

}  // namespace tracegraph::xnnpack
