// slice_scatter: a copy with a strided slice of the middle axis replaced.
#include "kernels/portable/portable.h"

#include <cstring>

namespace tracegraph::xnnpack::portable {

void slice_scatter(const float* x, const float* src, float* y, i64 outer, i64 size, i64 inner, i64 start, i64 step,
                   i64 length) {
  if (x != y) std::memcpy(y, x, static_cast<std::size_t>(outer * size * inner) * sizeof(float));
  for (i64 o = 0; o < outer; ++o) {
    for (i64 l = 0; l < length; ++l) {
      std::memcpy(y + (o * size + start + l * step) * inner, src + (o * length + l) * inner, static_cast<std::size_t>(inner) * sizeof(float));
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
