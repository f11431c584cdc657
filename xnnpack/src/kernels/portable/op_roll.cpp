// torch.roll along any dims.
#include "kernels/portable/portable.h"

#include <cstring>

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {

void roll(const float* x, float* y, const std::vector<i64>& shape, const std::vector<i64>& shifts) {
  const std::size_t rank = shape.size();
  const i64 total = product(shape, 0, rank);
  if (total == 0) return;
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  // Row by row of the last dim: each output row reads one input row, rolled.
  std::vector<i64> stride(rank, 1);
  for (std::size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * shape[d + 1];
  const i64 last = shape[rank - 1], s = shifts[rank - 1];
  std::vector<i64> idx(rank - 1, 0);
  for (i64 row = 0; row < total / last; ++row) {
    i64 from = 0;
    for (std::size_t d = 0; d + 1 < rank; ++d) from += ((idx[d] - shifts[d] + shape[d]) % shape[d]) * stride[d];
    float* out = y + row * last;
    std::memcpy(out + s, x + from, static_cast<std::size_t>(last - s) * sizeof(float));
    std::memcpy(out, x + from + last - s, static_cast<std::size_t>(s) * sizeof(float));
    for (std::size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
