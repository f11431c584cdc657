// numpy broadcasting of one tensor to a shape.
#include "kernels/portable/portable.h"

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {

void broadcast(const float* x, float* y, const std::vector<i64>& in_shape, const std::vector<i64>& out_shape) {
  const std::size_t rank = out_shape.size();
  const std::size_t lead = rank - in_shape.size();
  std::vector<i64> in_stride(rank, 0);
  i64 stride = 1;
  for (std::size_t d = in_shape.size(); d-- > 0;) {
    in_stride[lead + d] = in_shape[d] == 1 ? 0 : stride;
    stride *= in_shape[d];
  }
  const i64 total = product(out_shape, 0, rank);
  StridedWalk walk(out_shape, in_stride);
  for (i64 o = 0; o < total; ++o, walk.next()) y[o] = x[walk.offset()];
}

}  // namespace tracegraph::xnnpack::portable
