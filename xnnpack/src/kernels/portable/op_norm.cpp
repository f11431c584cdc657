// Group, instance, layer and RMS norm with the statistics of the input, and
// batch norm with the batch's or running statistics.
#include "kernels/portable/portable.h"
#include "kernels/simd.h"

#include <algorithm>
#include <cmath>

namespace tracegraph::xnnpack::portable {
namespace {

using simd::v4;

// The moments of the values added so far: count, mean and the sum of squared
// deviations. Each block of up to kBlock floats is read from memory once: its
// sum, then its deviations from that mean while it is in cache, in float
// lanes; the blocks merge in double (Chan, Golub and LeVeque), so a group of
// millions of elements keeps double's accuracy and a row's mean far from
// zero costs no precision.
constexpr i64 kBlock = 256;

float lanes(v4 a) { return (a[0] + a[1]) + (a[2] + a[3]); }

struct Moments {
  double count = 0, mean = 0, m2 = 0;

  void add(const float* x, i64 n) {
    for (i64 start = 0; start < n; start += kBlock) {
      const i64 nb = std::min(kBlock, n - start);
      const float* b = x + start;
      v4 s0{}, s1{};
      i64 i = 0;
      for (; i + 8 <= nb; i += 8) s0 += simd::load(b + i), s1 += simd::load(b + i + 4);
      float sum = lanes(s0 + s1);
      for (; i < nb; ++i) sum += b[i];
      // Centered on c, near the block's mean: the mean is c + r / nb, the
      // squared deviations q - r^2 / nb, whatever c's rounding.
      const float c = sum / static_cast<float>(nb);
      const v4 cv = simd::splat(c);
      v4 r0{}, r1{}, q0{}, q1{};
      for (i = 0; i + 8 <= nb; i += 8) {
        const v4 d0 = simd::load(b + i) - cv, d1 = simd::load(b + i + 4) - cv;
        r0 += d0, r1 += d1, q0 += d0 * d0, q1 += d1 * d1;
      }
      double r = lanes(r0 + r1), q = lanes(q0 + q1);
      for (; i < nb; ++i) {
        const double d = static_cast<double>(b[i]) - c;
        r += d, q += d * d;
      }
      const double size = static_cast<double>(nb), block_mean = c + r / size, block_m2 = std::max(0.0, q - r * r / size);
      const double total = count + size, delta = block_mean - mean;
      mean += delta * size / total;
      m2 += block_m2 + delta * delta * count * size / total;
      count = total;
    }
  }
  // 1 / sqrt(biased variance + eps).
  double inv_std(double eps) const { return 1.0 / std::sqrt((count > 0 ? m2 / count : 0.0) + eps); }
};

// y = (x - mean) * scale + shift over n floats; (x - mean) first, so that a
// mean far from zero costs no precision.
void normalize(const float* x, float* y, i64 n, float mean, float scale, float shift) {
  for (i64 i = 0; i < n; ++i) y[i] = (x[i] - mean) * scale + shift;
}

}  // namespace

void group_norm(const float* x, float* y, i64 channels, i64 inner, i64 groups, const float* weight, const float* bias, double eps, float* mean_out,
                float* rstd_out, i64 first, i64 count) {
  const i64 per_group = channels / groups;
  const i64 size = per_group * inner;
  for (i64 t = first; t < first + count; ++t) {
    const i64 n = t / groups, g = t % groups;
    const i64 offset = (n * channels + g * per_group) * inner;
    Moments m;
    m.add(x + offset, size);
    const double inv = m.inv_std(eps);
    if (mean_out) mean_out[t] = static_cast<float>(m.mean);
    if (rstd_out) rstd_out[t] = static_cast<float>(inv);
    for (i64 c = 0; c < per_group; ++c) {
      const i64 channel = g * per_group + c;
      normalize(x + offset + c * inner, y + offset + c * inner, inner, static_cast<float>(m.mean),
                static_cast<float>(inv * (weight ? weight[channel] : 1.0f)), bias ? bias[channel] : 0.0f);
    }
  }
}

void layer_norm(const float* x, float* y, i64 outer, i64 inner, const float* weight, const float* bias, double eps, float* mean_out,
                float* rstd_out) {
  for (i64 r = 0; r < outer; ++r) {
    const float* xr = x + r * inner;
    float* yr = y + r * inner;
    Moments m;
    m.add(xr, inner);
    const double inv_d = m.inv_std(eps);
    if (mean_out) mean_out[r] = static_cast<float>(m.mean);
    if (rstd_out) rstd_out[r] = static_cast<float>(inv_d);
    const float mean = static_cast<float>(m.mean), inv = static_cast<float>(inv_d);
    // One loop per case, each a plain map the compiler vectorizes.
    if (weight && bias) {
      for (i64 i = 0; i < inner; ++i) yr[i] = (xr[i] - mean) * inv * weight[i] + bias[i];
    } else if (weight) {
      for (i64 i = 0; i < inner; ++i) yr[i] = (xr[i] - mean) * inv * weight[i];
    } else if (bias) {
      for (i64 i = 0; i < inner; ++i) yr[i] = (xr[i] - mean) * inv + bias[i];
    } else {
      normalize(xr, yr, inner, mean, inv, 0.0f);
    }
  }
}

void rms_norm(const float* x, float* y, i64 outer, i64 inner, const float* weight, double eps) {
  for (i64 r = 0; r < outer; ++r) {
    const float* xr = x + r * inner;
    float* yr = y + r * inner;
    double sq = 0;
    for (i64 start = 0; start < inner; start += kBlock) {  // float lanes within a block, double across
      const i64 nb = std::min(kBlock, inner - start);
      const float* b = xr + start;
      v4 q0{}, q1{};
      i64 i = 0;
      for (; i + 8 <= nb; i += 8) {
        const v4 a0 = simd::load(b + i), a1 = simd::load(b + i + 4);
        q0 += a0 * a0, q1 += a1 * a1;
      }
      sq += lanes(q0 + q1);
      for (; i < nb; ++i) sq += static_cast<double>(b[i]) * b[i];
    }
    const float inv = static_cast<float>(1.0 / std::sqrt((inner ? sq / static_cast<double>(inner) : 0.0) + eps));
    if (weight) {
      for (i64 i = 0; i < inner; ++i) yr[i] = xr[i] * inv * weight[i];
    } else {
      for (i64 i = 0; i < inner; ++i) yr[i] = xr[i] * inv;
    }
  }
}

void batch_norm_batch_stats(const float* x, float* y, i64 batch, i64 channels, i64 inner, const float* weight, const float* bias, double eps,
                            float* mean_out, float* rstd_out, i64 first, i64 count) {
  for (i64 c = first; c < first + count; ++c) {
    Moments m;
    for (i64 b = 0; b < batch; ++b) m.add(x + (b * channels + c) * inner, inner);
    const double inv = m.inv_std(eps);
    if (mean_out) mean_out[c] = static_cast<float>(m.mean);
    if (rstd_out) rstd_out[c] = static_cast<float>(inv);
    const float scale = static_cast<float>(inv * (weight ? weight[c] : 1.0)), shift = bias ? bias[c] : 0.0f;
    for (i64 b = 0; b < batch; ++b) {
      const i64 offset = (b * channels + c) * inner;
      normalize(x + offset, y + offset, inner, static_cast<float>(m.mean), scale, shift);
    }
  }
}

void batch_norm_running_stats(const float* x, float* y, i64 batch, i64 channels, i64 inner, const float* running_mean, const float* running_var,
                              const float* weight, const float* bias, double eps) {
  for (i64 c = 0; c < channels; ++c) {
    const double inv_std = 1.0 / std::sqrt(static_cast<double>(running_var[c]) + eps);
    const double scale = inv_std * (weight ? weight[c] : 1.0), shift = (bias ? bias[c] : 0.0) - running_mean[c] * scale;
    for (i64 b = 0; b < batch; ++b)
      for (i64 i = 0; i < inner; ++i) {
        const i64 k = (b * channels + c) * inner + i;
        y[k] = static_cast<float>(x[k] * scale + shift);
      }
  }
}

}  // namespace tracegraph::xnnpack::portable
