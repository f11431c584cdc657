// as_strided: a strided view of a tensor's storage, copied out.
#include "kernels/portable/portable.h"

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {

void as_strided(const float* x, float* y, const std::vector<i64>& size, const std::vector<i64>& stride, i64 offset) {
  i64 count = 1;
  for (i64 s : size) count *= s;
  StridedWalk walk(size, stride, offset);
  for (i64 e = 0; e < count; ++e, walk.next()) y[e] = x[walk.offset()];
}

}  // namespace tracegraph::xnnpack::portable
