// Reductions over any set of dims: vector norms (linalg_vector_norm), amax, amin, any and all.
#include "kernels/portable/portable.h"

#include <cmath>
#include <limits>

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {

void reduce(Reduce op, const float* x, float* y, const std::vector<i64>& shape, const std::vector<bool>& reduced, double p) {
  const std::size_t rank = shape.size();
  // y's stride along each dim of x (0 where the dim is reduced).
  std::vector<i64> stride(rank, 0);
  i64 out_count = 1;
  for (std::size_t d = rank; d-- > 0;) {
    if (!reduced[d]) {
      stride[d] = out_count;
      out_count *= shape[d];
    }
  }
  i64 count = 1;
  for (i64 s : shape) count *= s;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double start = op == Reduce::kAmax || (op == Reduce::kNorm && p == kInf) ? -kInf
                       : op == Reduce::kAmin || (op == Reduce::kNorm && p == -kInf) ? kInf : op == Reduce::kAll ? 1.0 : 0.0;
  std::vector<double> acc(static_cast<std::size_t>(out_count), start);
  StridedWalk walk(shape, stride);  // the output index of each element
  for (i64 e = 0; e < count; ++e, walk.next()) {
    const double v = x[e];
    double& a = acc[static_cast<std::size_t>(walk.offset())];
    switch (op) {
      case Reduce::kNorm:
        if (std::isinf(p)) a = (p > 0 ? std::fabs(v) > a : std::fabs(v) < a) || std::isnan(v) ? std::fabs(v) : a;
        else if (p == 0) a += v != 0;
        else if (p == 1) a += std::fabs(v);
        else if (p == 2) a += v * v;
        else a += std::pow(std::fabs(v), p);
        break;
      case Reduce::kAmax: a = (v > a || std::isnan(v)) ? v : a; break;
      case Reduce::kAmin: a = (v < a || std::isnan(v)) ? v : a; break;
      case Reduce::kAny: a = a != 0 || v != 0 ? 1 : 0; break;
      case Reduce::kAll: a = a != 0 && v != 0 ? 1 : 0; break;
    }
  }
  for (i64 o = 0; o < out_count; ++o) {
    double a = acc[static_cast<std::size_t>(o)];
    if (op == Reduce::kNorm && !std::isinf(p) && p != 0 && p != 1) a = p == 2 ? std::sqrt(a) : std::pow(a, 1.0 / p);
    y[o] = static_cast<float>(a);
  }
}

}  // namespace tracegraph::xnnpack::portable
