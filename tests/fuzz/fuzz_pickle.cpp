// Fuzzes the unpickler: any bytes must give a value (acyclic, depth-bounded)
// or a tracegraph::Error.
#include <cstddef>
#include <cstdint>
#include <unordered_set>

#include "tracegraph/error.h"
#include "tracegraph/pickle.h"

namespace {
// Each value once: the memo shares values, and a walk that repeats them can
// take exponential time on a small hostile pickle.
std::size_t walk(const tracegraph::PickleValue& v, std::unordered_set<const tracegraph::PickleValue*>& seen) {
  if (!seen.insert(&v).second) return 0;
  std::size_t n = 1;
  for (const auto& item : v.items) n += walk(*item, seen);
  return n;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tracegraph::LoadLimits limits;
  limits.max_pickle_ops = 1 << 16;
  try {
    const auto v = tracegraph::read_pickle({reinterpret_cast<const std::byte*>(data), size}, "fuzz.pkl", limits);
    std::unordered_set<const tracegraph::PickleValue*> seen;
    volatile std::size_t sink = walk(*v, seen);
    (void)sink;
  } catch (const tracegraph::Error&) {
  }
  return 0;
}
