// Random values: uniform, normal, integers in a range and permutations, from
// a counter-based generator (splitmix64 of the stream and the element's
// index), so that any slice of a tensor, on any thread, gets the values the
// whole would.
#include "kernels/portable/portable.h"

#include <cmath>
#include <numbers>

namespace tracegraph::xnnpack::portable {
namespace {

std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t bits(std::uint64_t stream, std::uint64_t index) { return mix(stream ^ mix(index)); }
// 24 random bits as a float in [0, 1): every value exact.
float unit(std::uint64_t b) { return static_cast<float>(b >> 40) * 0x1p-24f; }

}  // namespace

void random_values(Random kind, float* y, i64 first, i64 count, std::uint64_t stream, double low, double high) {
  for (i64 i = first; i < first + count; ++i) {
    const auto index = static_cast<std::uint64_t>(i);
    switch (kind) {
      case Random::kUniform: y[i - first] = unit(bits(stream, index)); break;
      case Random::kInteger: y[i - first] = static_cast<float>(low + std::floor(static_cast<double>(unit(bits(stream, index))) * (high - low))); break;
      case Random::kNormal: {
        // Box-Muller on the pair of element i / 2: the cosine for even i, the sine for odd.
        const std::uint64_t pair = index / 2 * 2;
        const double u1 = (static_cast<double>(bits(stream, pair) >> 40) + 1.0) * 0x1p-24;  // (0, 1]: the log is finite
        const double u2 = unit(bits(stream, pair + 1));
        const double r = std::sqrt(-2.0 * std::log(u1)), angle = 2.0 * std::numbers::pi * u2;
        y[i - first] = static_cast<float>(r * (index % 2 ? std::sin(angle) : std::cos(angle)));
        break;
      }
    }
  }
}

void random_permutation(float* y, i64 n, std::uint64_t stream) {
  for (i64 i = 0; i < n; ++i) y[i] = static_cast<float>(i);
  for (i64 i = n - 1; i > 0; --i) {  // Fisher-Yates
    const auto j = static_cast<i64>(bits(stream, static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(i + 1));
    std::swap(y[i], y[j]);
  }
}

}  // namespace tracegraph::xnnpack::portable
