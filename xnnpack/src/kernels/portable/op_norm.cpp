// Group, instance, layer and RMS norm with the statistics of the input.
#include "kernels/portable/portable.h"

#include <cmath>

namespace tracegraph::xnnpack::portable {
namespace {

// Mean and 1 / sqrt(biased variance + eps) of n values, accumulated in double.
struct Moments {
  double mean, inv_std;
};
Moments moments(const float* x, i64 n, double eps) {
  double sum = 0;
  for (i64 i = 0; i < n; ++i) sum += x[i];
  const double mean = n ? sum / static_cast<double>(n) : 0.0;
  double sq = 0;
  for (i64 i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
  return {mean, 1.0 / std::sqrt((n ? sq / static_cast<double>(n) : 0.0) + eps)};
}

}  // namespace

void group_norm(const float* x, float* y, i64 batch, i64 channels, i64 inner, i64 groups, const float* weight,
                const float* bias, double eps, float* mean_out, float* rstd_out) {
  const i64 per_group = channels / groups;
  const i64 size = per_group * inner;
  for (i64 n = 0; n < batch; ++n) {
    for (i64 g = 0; g < groups; ++g) {
      const i64 offset = (n * channels + g * per_group) * inner;
      const float* xg = x + offset;
      float* yg = y + offset;
      const auto [mean, inv] = moments(xg, size, eps);
      if (mean_out) mean_out[n * groups + g] = static_cast<float>(mean);
      if (rstd_out) rstd_out[n * groups + g] = static_cast<float>(inv);
      for (i64 c = 0; c < per_group; ++c) {
        const i64 channel = g * per_group + c;
        const double scale = inv * (weight ? weight[channel] : 1.0f);
        const double shift = (bias ? bias[channel] : 0.0f) - mean * scale;
        for (i64 i = 0; i < inner; ++i) yg[c * inner + i] = static_cast<float>(xg[c * inner + i] * scale + shift);
      }
    }
  }
}

void layer_norm(const float* x, float* y, i64 outer, i64 inner, const float* weight, const float* bias, double eps, float* mean_out,
                float* rstd_out) {
  for (i64 r = 0; r < outer; ++r) {
    const float* xr = x + r * inner;
    float* yr = y + r * inner;
    const auto [mean, inv] = moments(xr, inner, eps);
    if (mean_out) mean_out[r] = static_cast<float>(mean);
    if (rstd_out) rstd_out[r] = static_cast<float>(inv);
    for (i64 i = 0; i < inner; ++i) {
      const double v = (xr[i] - mean) * inv;
      yr[i] = static_cast<float>(v * (weight ? weight[i] : 1.0f) + (bias ? bias[i] : 0.0f));
    }
  }
}

void rms_norm(const float* x, float* y, i64 outer, i64 inner, const float* weight, double eps) {
  for (i64 r = 0; r < outer; ++r) {
    const float* xr = x + r * inner;
    float* yr = y + r * inner;
    double sq = 0;
    for (i64 i = 0; i < inner; ++i) sq += static_cast<double>(xr[i]) * xr[i];
    const double inv = 1.0 / std::sqrt((inner ? sq / static_cast<double>(inner) : 0.0) + eps);
    for (i64 i = 0; i < inner; ++i) yr[i] = static_cast<float>(xr[i] * inv * (weight ? weight[i] : 1.0f));
  }
}

void batch_norm_batch_stats(const float* x, float* y, i64 batch, i64 channels, i64 inner, const float* weight, const float* bias, double eps,
                            float* mean_out, float* rstd_out) {
  for (i64 c = 0; c < channels; ++c) {
    double sum = 0;
    for (i64 b = 0; b < batch; ++b)
      for (i64 i = 0; i < inner; ++i) sum += x[(b * channels + c) * inner + i];
    const double n = static_cast<double>(batch * inner);
    const double mean = n > 0 ? sum / n : 0.0;
    double sq = 0;
    for (i64 b = 0; b < batch; ++b)
      for (i64 i = 0; i < inner; ++i) {
        const double d = x[(b * channels + c) * inner + i] - mean;
        sq += d * d;
      }
    const double inv_std = 1.0 / std::sqrt((n > 0 ? sq / n : 0.0) + eps);
    if (mean_out) mean_out[c] = static_cast<float>(mean);
    if (rstd_out) rstd_out[c] = static_cast<float>(inv_std);
    const double w = weight ? weight[c] : 1.0, s = bias ? bias[c] : 0.0;
    for (i64 b = 0; b < batch; ++b)
      for (i64 i = 0; i < inner; ++i) {
        const i64 k = (b * channels + c) * inner + i;
        y[k] = static_cast<float>((x[k] - mean) * inv_std * w + s);
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
