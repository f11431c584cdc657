// 1D max and average pooling over the last dim.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tracegraph::xnnpack::portable {

void max_pool1d(const Pool1d& p, const float* x, float* y) {
  for (i64 q = 0; q < p.planes; ++q) {
    const float* xr = x + q * p.in_length;
    for (i64 o = 0; o < p.out_length; ++o) {
      float m = -std::numeric_limits<float>::infinity();
      for (i64 k = 0; k < p.kernel; ++k) {
        const i64 i = o * p.stride - p.padding + k * p.dilation;
        if (i >= 0 && i < p.in_length && (xr[i] > m || std::isnan(xr[i]))) m = xr[i];
      }
      y[q * p.out_length + o] = m;
    }
  }
}

void avg_pool1d(const Pool1d& p, const float* x, float* y) {
  for (i64 q = 0; q < p.planes; ++q) {
    const float* xr = x + q * p.in_length;
    for (i64 o = 0; o < p.out_length; ++o) {
      i64 start = o * p.stride - p.padding;
      i64 end = std::min(start + p.kernel, p.in_length + p.padding);
      const i64 pool_size = end - start;
      start = std::max<i64>(start, 0);
      end = std::min(end, p.in_length);
      double sum = 0;
      for (i64 i = start; i < end; ++i) sum += xr[i];
      const i64 divisor = p.count_include_pad ? pool_size : end - start;
      y[q * p.out_length + o] = divisor > 0 ? static_cast<float>(sum / static_cast<double>(divisor)) : 0.0f;
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
