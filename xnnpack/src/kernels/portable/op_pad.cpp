// pad / constant_pad_nd / reflection and replication padding: every mode over any dims.
#include "kernels/portable/portable.h"

#include <algorithm>

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {

void pad(const float* x, float* y, const std::vector<i64>& in_shape, const std::vector<i64>& before, const std::vector<i64>& after,
         PadMode mode, float value) {
  const std::size_t rank = in_shape.size();
  std::vector<i64> out_shape(rank);
  for (std::size_t d = 0; d < rank; ++d) out_shape[d] = in_shape[d] + before[d] + after[d];
  const i64 total = product(out_shape, 0, rank);
  std::vector<i64> in_stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) in_stride[d - 1] = in_stride[d] * in_shape[d];
  // Walk the output; the last dim in a run per row.
  const i64 last = rank ? out_shape[rank - 1] : 1;
  std::vector<i64> idx(rank, 0);
  for (i64 row = 0; row < total / std::max<i64>(last, 1); ++row) {
    // The input offset of this row's leading dims, or -1 when it maps outside (constant mode).
    i64 base = 0;
    bool outside = false;
    for (std::size_t d = 0; d + 1 < rank; ++d) {
      i64 i = idx[d] - before[d];
      const i64 n = in_shape[d];
      if (i < 0 || i >= n) {
        if (mode == PadMode::kConstant) outside = true;
        else if (mode == PadMode::kReplicate) i = std::clamp<i64>(i, 0, n - 1);
        else if (mode == PadMode::kCircular) i = ((i % n) + n) % n;
        else {  // reflect: -1 -> 1, n -> n - 2
          const i64 period = 2 * (n - 1);
          i = period ? ((i % period) + period) % period : 0;
          if (i >= n) i = period - i;
        }
      }
      base += i * in_stride[d];
    }
    float* out_row = y + row * last;
    const std::size_t d = rank - 1;
    const i64 n = rank ? in_shape[d] : 1;
    for (i64 j = 0; j < last; ++j) {
      if (outside) {
        out_row[j] = value;
        continue;
      }
      i64 i = j - (rank ? before[d] : 0);
      if (i < 0 || i >= n) {
        if (mode == PadMode::kConstant) {
          out_row[j] = value;
          continue;
        }
        if (mode == PadMode::kReplicate) i = std::clamp<i64>(i, 0, n - 1);
        else if (mode == PadMode::kCircular) i = ((i % n) + n) % n;
        else {
          const i64 period = 2 * (n - 1);
          i = period ? ((i % period) + period) % period : 0;
          if (i >= n) i = period - i;
        }
      }
      out_row[j] = x[base + i];
    }
    for (std::size_t k = rank >= 1 ? rank - 1 : 0; k-- > 0;) {  // next row: odometer over the leading dims
      if (++idx[k] < out_shape[k]) break;
      idx[k] = 0;
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
