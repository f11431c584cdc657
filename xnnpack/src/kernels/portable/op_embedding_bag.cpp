// embedding_bag: rows of a table gathered by bag and reduced (sum, mean, max); masked_scatter.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tracegraph::xnnpack::portable {

bool embedding_bag(const float* weight, i64 num, i64 dim, const float* indices, i64 count, const float* offsets, i64 bags,
                   const float* per_sample_weights, int mode, i64 padding_idx, float* y, double* bad) {
  for (i64 b = 0; b < bags; ++b) {
    float* out = y + b * dim;
    // Offsets are held as floats: read as positions in the indices, clamped into them (NaN as 0).
    auto position = [count](float v) { return v >= 0 ? (v < static_cast<float>(count) ? static_cast<i64>(v) : count) : i64{0}; };
    const i64 begin = position(offsets[b]);
    const i64 end = b + 1 < bags ? std::max(begin, position(offsets[b + 1])) : count;
    std::fill_n(out, dim, mode == 2 ? -std::numeric_limits<float>::infinity() : 0.0f);
    i64 taken = 0;
    for (i64 k = begin; k < end; ++k) {
      const float at = indices[k];
      if (!(at >= 0 && at < static_cast<float>(num))) {
        *bad = at;
        return false;
      }
      const auto row = static_cast<i64>(at);
      if (row == padding_idx) continue;
      const float* w = weight + row * dim;
      const float scale = per_sample_weights ? per_sample_weights[k] : 1.0f;
      for (i64 d = 0; d < dim; ++d) {
        if (mode == 2) out[d] = std::max(out[d], w[d]);
        else out[d] += scale * w[d];
      }
      ++taken;
    }
    if (taken == 0) std::fill_n(out, dim, 0.0f);
    else if (mode == 1)
      for (i64 d = 0; d < dim; ++d) out[d] /= static_cast<float>(taken);
  }
  return true;
}

bool masked_scatter(const float* x, const float* mask, const float* source, float* y, i64 count, i64 source_count, i64* needed) {
  i64 next = 0;
  for (i64 i = 0; i < count; ++i) {
    if (mask[i] != 0) {
      y[i] = next < source_count ? source[next] : x[i];
      ++next;
    } else {
      y[i] = x[i];
    }
  }
  *needed = next;
  return next <= source_count;
}

}  // namespace tracegraph::xnnpack::portable
