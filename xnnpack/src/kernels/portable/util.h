// What several portable kernels share. Private to kernels/portable.
#pragma once

#include <cstdint>
#include <vector>

namespace tracegraph::xnnpack::portable {

// The product of v[from, to).
inline std::int64_t product(const std::vector<std::int64_t>& v, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

}  // namespace tracegraph::xnnpack::portable
