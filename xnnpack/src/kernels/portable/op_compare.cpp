// Comparisons, masked_fill and fill (masks held as float32 0/1).
#include "kernels/portable/portable.h"

#include <algorithm>

namespace tracegraph::xnnpack::portable {

void compare(Compare op, const float* a, const float* b, float* y, i64 count, i64 b_stride) {
  for (i64 i = 0; i < count; ++i) {
    const float p = a[i], q = b[i * b_stride];
    bool r = false;
    switch (op) {
      case Compare::kEq: r = p == q; break;
      case Compare::kNe: r = p != q; break;
      case Compare::kLt: r = p < q; break;
      case Compare::kLe: r = p <= q; break;
      case Compare::kGt: r = p > q; break;
      case Compare::kGe: r = p >= q; break;
    }
    y[i] = r ? 1.0f : 0.0f;
  }
}

void masked_fill(const float* x, const float* mask, float value, float* y, i64 count) {
  for (i64 i = 0; i < count; ++i) y[i] = mask[i] != 0 ? value : x[i];
}

void fill(float* y, float value, i64 count) { std::fill(y, y + count, value); }

}  // namespace tracegraph::xnnpack::portable
