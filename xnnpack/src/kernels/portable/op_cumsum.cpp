// cumsum and cumprod along one dim.
#include "kernels/portable/portable.h"

#include <algorithm>
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

}  // namespace tracegraph::xnnpack::portable
