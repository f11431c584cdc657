// cumsum and cumprod along one dim; cummax and cummin with their positions.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tracegraph::xnnpack::portable {

void cumsum(const float* x, float* y, i64 outer, i64 size, i64 inner, bool product) {
  std::vector<double> run(static_cast<std::size_t>(inner));
  for (i64 o = 0; o < outer; ++o) {
    std::fill(run.begin(), run.end(), product ? 1.0 : 0.0);
    for (i64 s = 0; s < size; ++s) {
      const i64 base = (o * size + s) * inner;
      for (i64 i = 0; i < inner; ++i) {
        double& r = run[static_cast<std::size_t>(i)];
        r = product ? r * x[base + i] : r + x[base + i];
        y[base + i] = static_cast<float>(r);
      }
    }
  }
}

void cum_extreme(const float* x, float* values, float* indices, i64 outer, i64 size, i64 inner, bool max) {
  for (i64 o = 0; o < outer; ++o) {
    for (i64 i = 0; i < inner; ++i) {
      const i64 base = o * size * inner + i;
      float best = size ? x[base] : 0.0f;
      i64 at = 0;
      for (i64 s = 0; s < size; ++s) {
        const float v = x[base + s * inner];
        // torch's rule: a NaN always takes over (the latest NaN's position);
        // after one, nothing else does; a tie moves the position forward.
        if (std::isnan(v) || (!std::isnan(best) && (max ? v >= best : v <= best))) best = v, at = s;
        values[base + s * inner] = best;
        indices[base + s * inner] = static_cast<float>(at);
      }
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
