// flip along any dims, and tril / triu.
#include "kernels/portable/portable.h"

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {

void flip(const float* x, float* y, const std::vector<i64>& shape, const std::vector<bool>& flipped) {
  const std::size_t rank = shape.size();
  std::vector<i64> stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  i64 start = 0;  // x's offset of y's first element
  for (std::size_t d = 0; d < rank; ++d) {
    if (!flipped[d]) continue;
    start += (shape[d] - 1) * stride[d];
    stride[d] = -stride[d];
  }
  StridedWalk walk(shape, stride, start);
  const i64 count = product(shape, 0, rank);
  for (i64 e = 0; e < count; ++e, walk.next()) y[e] = x[walk.offset()];
}

void triangle(const float* x, float* y, i64 planes, i64 rows, i64 cols, i64 diagonal, bool lower) {
  for (i64 p = 0; p < planes; ++p)
    for (i64 r = 0; r < rows; ++r)
      for (i64 c = 0; c < cols; ++c) {
        const i64 k = (p * rows + r) * cols + c;
        const bool keep = lower ? c - r <= diagonal : c - r >= diagonal;
        y[k] = keep ? x[k] : 0.0f;
      }
}

}  // namespace tracegraph::xnnpack::portable
