// grid_sampler_2d: each output pixel reads the input at the grid's (x, y), as torch's CPU kernel does.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>

namespace tracegraph::xnnpack::portable {
namespace {

// [-1, 1] to pixel coordinates: -1 and 1 the corner pixels' centres
// (align_corners) or their outer edges.
double unnormalize(double coord, i64 size, bool align_corners) {
  return align_corners ? (coord + 1) / 2 * static_cast<double>(size - 1) : ((coord + 1) * static_cast<double>(size) - 1) / 2;
}

// `in` reflected into [twice_low / 2, twice_high / 2].
double reflect(double in, i64 twice_low, i64 twice_high) {
  if (twice_low == twice_high) return 0;
  const double low = static_cast<double>(twice_low) / 2, span = static_cast<double>(twice_high - twice_low) / 2;
  in = std::fabs(in - low);
  const double extra = std::fmod(in, span);
  const bool even = std::fmod(std::floor(in / span), 2.0) == 0;  // the number of flips
  return even ? extra + low : span - extra + low;
}

// A pixel coordinate under the padding mode: clamped (border), reflected
// (reflection), or as it is (zeros: reads outside give 0).
double padded(double coord, i64 size, GridPadding padding, bool align_corners) {
  const double last = static_cast<double>(size - 1);
  if (padding == GridPadding::kBorder) return std::clamp(coord, 0.0, last);
  if (padding == GridPadding::kReflection) {
    coord = align_corners ? reflect(coord, 0, 2 * (size - 1)) : reflect(coord, -1, 2 * size - 1);
    return std::clamp(coord, 0.0, last);
  }
  return coord;
}

// Keys' cubic convolution weights (A = -0.75) of the four taps around t in [0, 1).
void cubic_weights(double t, double w[4]) {
  constexpr double A = -0.75;
  auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// A coordinate as a pixel index: -1 (outside every input) for NaN, infinities
// and values far outside, which no integer conversion may see.
i64 index_of(double coord) {
  return std::isfinite(coord) && std::fabs(coord) < 1e15 ? static_cast<i64>(coord) : -1;
}

}  // namespace

void grid_sample(const GridSample& g, const float* x, const float* grid, float* y) {
  const i64 in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (i64 n = 0; n < g.batch; ++n) {
    const float* image = x + n * g.channels * in_plane;
    float* out = y + n * g.channels * out_plane;
    auto at = [&](i64 c, i64 row, i64 col) -> double {  // 0 outside the input
      return row < 0 || row >= g.in_h || col < 0 || col >= g.in_w ? 0.0 : image[c * in_plane + row * g.in_w + col];
    };
    for (i64 p = 0; p < out_plane; ++p) {
      const float* xy = grid + (n * out_plane + p) * 2;
      const double gx = unnormalize(xy[0], g.in_w, g.align_corners), gy = unnormalize(xy[1], g.in_h, g.align_corners);
      if (g.mode == GridMode::kBicubic) {
        // The taps' coordinates padded one by one (torch pads each tap, not the point).
        const double fx = std::floor(gx), fy = std::floor(gy);
        double wx[4], wy[4];
        cubic_weights(gx - fx, wx);
        cubic_weights(gy - fy, wy);
        i64 cols[4], rows[4];
        for (int k = 0; k < 4; ++k) {
          cols[k] = index_of(padded(fx - 1 + k, g.in_w, g.padding, g.align_corners));
          rows[k] = index_of(padded(fy - 1 + k, g.in_h, g.padding, g.align_corners));
        }
        for (i64 c = 0; c < g.channels; ++c) {
          double sum = 0;
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) sum += wy[i] * wx[j] * at(c, rows[i], cols[j]);
          out[c * out_plane + p] = static_cast<float>(sum);
        }
        continue;
      }
      const double ix = padded(gx, g.in_w, g.padding, g.align_corners), iy = padded(gy, g.in_h, g.padding, g.align_corners);
      if (g.mode == GridMode::kNearest) {
        const i64 col = index_of(std::nearbyint(ix)), row = index_of(std::nearbyint(iy));  // half to even, as torch
        for (i64 c = 0; c < g.channels; ++c) out[c * out_plane + p] = static_cast<float>(at(c, row, col));
        continue;
      }
      const double fx = std::floor(ix), fy = std::floor(iy);
      const double east = ix - fx, south = iy - fy;
      const i64 col = index_of(fx), row = index_of(fy);
      for (i64 c = 0; c < g.channels; ++c) {
        const double v = at(c, row, col) * (1 - east) * (1 - south) + at(c, row, col + 1) * east * (1 - south) +
                         at(c, row + 1, col) * (1 - east) * south + at(c, row + 1, col + 1) * east * south;
        out[c * out_plane + p] = static_cast<float>(v);
      }
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
