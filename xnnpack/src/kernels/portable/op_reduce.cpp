// Reductions over any set of dims: vector norms (linalg_vector_norm), amax, amin, any, all, prod,
// var (and std from it), logsumexp, argmax and argmin.
#include "kernels/portable/portable.h"

#include <algorithm>
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
                       : op == Reduce::kAmin || (op == Reduce::kNorm && p == -kInf) ? kInf : op == Reduce::kAll || op == Reduce::kProd ? 1.0 : 0.0;
  std::vector<double> acc(static_cast<std::size_t>(out_count), start);
  // The second accumulator: the sum of squares (var), the max (logsumexp's
  // first pass), the best value (argmax, argmin); and the count per output.
  std::vector<double> more(static_cast<std::size_t>(out_count), op == Reduce::kArgmax || op == Reduce::kLogSumExp ? -kInf : op == Reduce::kArgmin ? kInf : 0.0);
  std::vector<i64> seen(static_cast<std::size_t>(out_count), 0);
  if (op == Reduce::kLogSumExp) {
    StridedWalk first(shape, stride);
    for (i64 e = 0; e < count; ++e, first.next()) {
      double& m = more[static_cast<std::size_t>(first.offset())];
      m = std::max(m, static_cast<double>(x[e]));
    }
  }
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
      case Reduce::kProd: a *= v; break;
      case Reduce::kVar:
        a += v;
        more[static_cast<std::size_t>(walk.offset())] += v * v;
        break;
      case Reduce::kLogSumExp: {
        const double m = more[static_cast<std::size_t>(walk.offset())];
        a += std::isinf(m) ? (v == m ? 1.0 : 0.0) : std::exp(v - m);
        break;
      }
      case Reduce::kArgmax:
      case Reduce::kArgmin: {
        double& best = more[static_cast<std::size_t>(walk.offset())];
        const i64 position = seen[static_cast<std::size_t>(walk.offset())];
        const bool better = std::isnan(v) ? !std::isnan(best) : !std::isnan(best) && (op == Reduce::kArgmax ? v > best : v < best);
        if (better || position == 0) best = v, a = static_cast<double>(position);
        break;
      }
    }
    ++seen[static_cast<std::size_t>(walk.offset())];
  }
  for (i64 o = 0; o < out_count; ++o) {
    double a = acc[static_cast<std::size_t>(o)];
    if (op == Reduce::kNorm && !std::isinf(p) && p != 0 && p != 1) a = p == 2 ? std::sqrt(a) : std::pow(a, 1.0 / p);
    const double n = static_cast<double>(seen[static_cast<std::size_t>(o)]);
    if (op == Reduce::kVar) {
      const double mean = n > 0 ? a / n : NAN;
      a = std::max(n - p, 0.0) > 0 ? std::max(more[static_cast<std::size_t>(o)] - n * mean * mean, 0.0) / (n - p) : NAN;
    }
    if (op == Reduce::kLogSumExp) {
      const double m = more[static_cast<std::size_t>(o)];
      a = std::isinf(m) ? m : m + std::log(a);
    }
    y[o] = static_cast<float>(a);
  }
}

}  // namespace tracegraph::xnnpack::portable
