// cdist, pdist and pairwise_distance: p-norm distances between rows;
// cosine_similarity. Accumulated in double.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

void pairwise_distance(const float* a, const float* b, float* y, i64 rows, i64 cols, double p, double eps) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (i64 r = 0; r < rows; ++r) {
    // torch's norm of (a - b + eps) over the row: the order's own rule for 0 and +-inf.
    double acc = p == kInf ? 0.0 : p == -kInf ? kInf : 0.0;
    for (i64 k = 0; k < cols; ++k) {
      const float diff = a[r * cols + k] - b[r * cols + k] + static_cast<float>(eps);  // in float32, as torch's subtraction
      const double d = std::fabs(static_cast<double>(diff));
      if (std::isinf(p)) acc = std::isnan(d) || (p > 0 ? d > acc : d < acc) ? d : acc;
      else if (p == 0) acc += d != 0 ? 1.0 : 0.0;
      else if (p == 1) acc += d;
      else if (p == 2) acc += d * d;
      else acc += std::pow(d, p);
    }
    if (cols == 0 && std::isinf(p)) acc = 0;
    if (!std::isinf(p) && p != 0 && p != 1) acc = p == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / p);
    y[r] = static_cast<float>(acc);
  }
}

void cosine_similarity(const float* a, const float* b, float* y, i64 outer, i64 size, i64 inner, double eps) {
  for (i64 o = 0; o < outer; ++o) {
    for (i64 i = 0; i < inner; ++i) {
      const float* ai = a + o * size * inner + i;
      const float* bi = b + o * size * inner + i;
      double aa = 0, bb = 0;
      for (i64 s = 0; s < size; ++s) {
        aa += static_cast<double>(ai[s * inner]) * ai[s * inner];
        bb += static_cast<double>(bi[s * inner]) * bi[s * inner];
      }
      // torch divides each operand by its norm (at least eps) before the product.
      const double na = std::max(std::sqrt(aa), eps), nb = std::max(std::sqrt(bb), eps);
      double dot = 0;
      for (i64 s = 0; s < size; ++s) dot += (ai[s * inner] / na) * (bi[s * inner] / nb);
      y[o * inner + i] = static_cast<float>(dot);
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
