// log_softmax that stays finite where the softmax underflows.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tracegraph::xnnpack::portable {

void log_softmax(const float* x, float* y, i64 rows, i64 length) {
  for (i64 r = 0; r < rows; ++r) {
    const float* xr = x + r * length;
    float* yr = y + r * length;
    float m = -std::numeric_limits<float>::infinity();
    for (i64 i = 0; i < length; ++i) m = std::max(m, xr[i]);
    double sum = 0;
    for (i64 i = 0; i < length; ++i) sum += std::exp(static_cast<double>(xr[i] - m));
    const float shift = m + static_cast<float>(std::log(sum));
    for (i64 i = 0; i < length; ++i) yr[i] = xr[i] - shift;
  }
}

}  // namespace tracegraph::xnnpack::portable
