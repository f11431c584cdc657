// Adaptive average and max pooling over 1 to 3 spatial dims.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tracegraph::xnnpack::portable {

void adaptive_pool(const float* x, float* y, i64 planes, const std::vector<i64>& in, const std::vector<i64>& out, bool max,
                   float* indices) {
  // As three dims, the missing leading ones of size 1.
  i64 id[3] = {1, 1, 1}, od[3] = {1, 1, 1};
  const std::size_t lead = 3 - in.size();
  for (std::size_t i = 0; i < in.size(); ++i) id[lead + i] = in[i], od[lead + i] = out[i];
  auto begin = [](i64 o, i64 n, i64 m) { return (o * n) / m; };
  auto end = [](i64 o, i64 n, i64 m) { return ((o + 1) * n + m - 1) / m; };
  const i64 in_plane = id[0] * id[1] * id[2], out_plane = od[0] * od[1] * od[2];
  for (i64 q = 0; q < planes; ++q) {
    const float* xp = x + q * in_plane;
    float* yp = y + q * out_plane;
    for (i64 a = 0; a < od[0]; ++a) {
      for (i64 b = 0; b < od[1]; ++b) {
        for (i64 c = 0; c < od[2]; ++c) {
          double sum = 0;
          float m = -std::numeric_limits<float>::infinity();
          i64 count = 0, at = (begin(a, id[0], od[0]) * id[1] + begin(b, id[1], od[1])) * id[2] + begin(c, id[2], od[2]);
          for (i64 i = begin(a, id[0], od[0]); i < end(a, id[0], od[0]); ++i) {
            for (i64 j = begin(b, id[1], od[1]); j < end(b, id[1], od[1]); ++j) {
              for (i64 k = begin(c, id[2], od[2]); k < end(c, id[2], od[2]); ++k) {
                const i64 e = (i * id[1] + j) * id[2] + k;
                const float v = xp[e];
                sum += v;
                if (v > m || std::isnan(v)) m = v, at = e;
                ++count;
              }
            }
          }
          const i64 o = (a * od[1] + b) * od[2] + c;
          yp[o] = max ? m : static_cast<float>(sum / static_cast<double>(std::max<i64>(count, 1)));
          if (max && indices) indices[q * out_plane + o] = static_cast<float>(at);
        }
      }
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
