// cdist and pdist: p-norm distances between rows, accumulated in double.
#include "kernels/portable/portable.h"

#include <cmath>

namespace tracegraph::xnnpack::portable {
namespace {

double distance(const float* a, const float* b, i64 cols, double p) {
  double acc = 0;
  for (i64 k = 0; k < cols; ++k) {
    const double d = std::fabs(static_cast<double>(a[k]) - static_cast<double>(b[k]));
    if (p == 0) acc += d != 0 ? 1.0 : 0.0;
    else if (std::isinf(p)) acc = std::max(acc, d);
    else if (p == 1) acc += d;
    else if (p == 2) acc += d * d;
    else acc += std::pow(d, p);
  }
  if (p == 0 || p == 1 || std::isinf(p)) return acc;
  return p == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / p);
}

}  // namespace

void cdist(const float* x1, const float* x2, float* y, i64 batch, i64 rows1, i64 rows2, i64 cols, double p) {
  for (i64 b = 0; b < batch; ++b)
    for (i64 i = 0; i < rows1; ++i)
      for (i64 j = 0; j < rows2; ++j)
        y[(b * rows1 + i) * rows2 + j] = static_cast<float>(distance(x1 + (b * rows1 + i) * cols, x2 + (b * rows2 + j) * cols, cols, p));
}

void pdist(const float* x, float* y, i64 rows, i64 cols, double p) {
  i64 k = 0;
  for (i64 i = 0; i < rows; ++i)
    for (i64 j = i + 1; j < rows; ++j) y[k++] = static_cast<float>(distance(x + i * cols, x + j * cols, cols, p));
}

}  // namespace tracegraph::xnnpack::portable
