// sort and topk: each line along one dim ordered by a stable sort of its indices.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace tracegraph::xnnpack::portable {

void sort(const float* x, float* values, float* indices, i64 outer, i64 size, i64 inner, i64 k, bool descending) {
  std::vector<i64> order(static_cast<std::size_t>(size));
  std::vector<float> line(static_cast<std::size_t>(size));
  // NaN above every number: first when descending, last when ascending.
  auto before = [&](i64 a, i64 b) {
    const float p = line[static_cast<std::size_t>(a)], q = line[static_cast<std::size_t>(b)];
    if (descending) return (std::isnan(p) && !std::isnan(q)) || p > q;
    return (!std::isnan(p) && std::isnan(q)) || p < q;
  };
  for (i64 o = 0; o < outer; ++o) {
    for (i64 i = 0; i < inner; ++i) {
      const float* in = x + o * size * inner + i;
      for (i64 j = 0; j < size; ++j) line[static_cast<std::size_t>(j)] = in[j * inner];
      std::iota(order.begin(), order.end(), i64{0});
      if (k < size) {
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](i64 a, i64 b) {
          return before(a, b) || (!before(b, a) && a < b);  // ties by index: what a stable sort gives
        });
      } else {
        std::stable_sort(order.begin(), order.end(), before);
      }
      float* v = values + o * k * inner + i;
      float* at = indices + o * k * inner + i;
      for (i64 j = 0; j < k; ++j) {
        const i64 from = order[static_cast<std::size_t>(j)];
        v[j * inner] = line[static_cast<std::size_t>(from)];
        at[j * inner] = static_cast<float>(from);
      }
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
