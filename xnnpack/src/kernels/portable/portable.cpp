#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/layout.h"

namespace tracegraph::xnnpack::portable {
namespace {

i64 product(const std::vector<i64>& v, std::size_t from, std::size_t to) {
  i64 p = 1;
  for (std::size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

// PyTorch's area_pixel_compute_source_index.
double source_index(double scale, i64 dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<double>(dst);
  const double src = scale * (static_cast<double>(dst) + 0.5) - 0.5;
  return (!cubic && src < 0) ? 0.0 : src;
}

// PyTorch's area_pixel_compute_scale, from the caller's per-axis step.
double step_of(i64 in, i64 out, double scale, bool align_corners) {
  if (align_corners) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  return scale;
}

// One axis of a linear resize: for each output index, two input indices and weights.
struct Taps {
  std::vector<i64> i0, i1;
  std::vector<float> w0, w1;
};
Taps linear_taps(i64 in, i64 out, double scale, bool align_corners) {
  Taps t;
  const double s = step_of(in, out, scale, align_corners);
  for (i64 o = 0; o < out; ++o) {
    const double src = source_index(s, o, align_corners, false);
    const i64 a = std::min<i64>(static_cast<i64>(src), in - 1);
    const i64 b = a + (a < in - 1 ? 1 : 0);
    const float l1 = static_cast<float>(src - static_cast<double>(a));
    t.i0.push_back(a);
    t.i1.push_back(b);
    t.w0.push_back(1.0f - l1);
    t.w1.push_back(l1);
  }
  return t;
}

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

double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

}  // namespace

void unary(Unary op, const float* x, float* y, i64 count) {
  switch (op) {
    case Unary::kHardsigmoid:
      for (i64 i = 0; i < count; ++i) y[i] = std::min(std::max(x[i] + 3.0f, 0.0f), 6.0f) / 6.0f;
      break;
    case Unary::kSilu:
      kernels::silu(x, y, count);
      break;
    case Unary::kGeluTanh:
      for (i64 i = 0; i < count; ++i) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
      }
      break;
    case Unary::kMish:
      for (i64 i = 0; i < count; ++i) y[i] = x[i] * std::tanh(std::log1p(std::exp(x[i])));
      break;
    case Unary::kExp:
      for (i64 i = 0; i < count; ++i) y[i] = std::exp(x[i]);
      break;
    case Unary::kLog:
      for (i64 i = 0; i < count; ++i) y[i] = std::log(x[i]);
      break;
    case Unary::kSqrt:
      for (i64 i = 0; i < count; ++i) y[i] = std::sqrt(x[i]);
      break;
    case Unary::kRsqrt:
      for (i64 i = 0; i < count; ++i) y[i] = 1.0f / std::sqrt(x[i]);
      break;
    case Unary::kNeg:
      for (i64 i = 0; i < count; ++i) y[i] = -x[i];
      break;
    case Unary::kAbs:
      for (i64 i = 0; i < count; ++i) y[i] = std::fabs(x[i]);
      break;
    case Unary::kSquare:
      for (i64 i = 0; i < count; ++i) y[i] = x[i] * x[i];
      break;
    case Unary::kErf:
      for (i64 i = 0; i < count; ++i) y[i] = std::erf(x[i]);
      break;
  }
}

void pow_scalar(const float* x, float* y, i64 count, double exponent) {
  if (exponent == 2.0) {
    for (i64 i = 0; i < count; ++i) y[i] = x[i] * x[i];
    return;
  }
  const float e = static_cast<float>(exponent);
  for (i64 i = 0; i < count; ++i) y[i] = std::pow(x[i], e);
}

void rsub_scalar(const float* x, float* y, i64 count, double other, double alpha) {
  const float o = static_cast<float>(other), a = static_cast<float>(alpha);
  for (i64 i = 0; i < count; ++i) y[i] = o - a * x[i];
}

void pad(const float* x, float* y, const std::vector<i64>& in_shape, const std::vector<i64>& before, const std::vector<i64>& after,
         PadMode mode, float value) {
  const std::size_t rank = in_shape.size();
  std::vector<i64> out_shape(rank);
  for (std::size_t d = 0; d < rank; ++d) out_shape[d] = in_shape[d] + before[d] + after[d];
  const i64 total = product(out_shape, 0, rank);
  std::vector<i64> in_stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) in_stride[d - 1] = in_stride[d] * in_shape[d];
  // Walk the output; the last dim in a run per row.
  const i64 last = rank ? out_shape[rank - 1] : 1;
  std::vector<i64> idx(rank, 0);
  for (i64 row = 0; row < total / std::max<i64>(last, 1); ++row) {
    // The input offset of this row's leading dims, or -1 when it maps outside (constant mode).
    i64 base = 0;
    bool outside = false;
    for (std::size_t d = 0; d + 1 < rank; ++d) {
      i64 i = idx[d] - before[d];
      const i64 n = in_shape[d];
      if (i < 0 || i >= n) {
        if (mode == PadMode::kConstant) outside = true;
        else if (mode == PadMode::kReplicate) i = std::clamp<i64>(i, 0, n - 1);
        else if (mode == PadMode::kCircular) i = ((i % n) + n) % n;
        else {  // reflect: -1 -> 1, n -> n - 2
          const i64 period = 2 * (n - 1);
          i = period ? ((i % period) + period) % period : 0;
          if (i >= n) i = period - i;
        }
      }
      base += i * in_stride[d];
    }
    float* out_row = y + row * last;
    const std::size_t d = rank - 1;
    const i64 n = rank ? in_shape[d] : 1;
    for (i64 j = 0; j < last; ++j) {
      if (outside) {
        out_row[j] = value;
        continue;
      }
      i64 i = j - (rank ? before[d] : 0);
      if (i < 0 || i >= n) {
        if (mode == PadMode::kConstant) {
          out_row[j] = value;
          continue;
        }
        if (mode == PadMode::kReplicate) i = std::clamp<i64>(i, 0, n - 1);
        else if (mode == PadMode::kCircular) i = ((i % n) + n) % n;
        else {
          const i64 period = 2 * (n - 1);
          i = period ? ((i % period) + period) % period : 0;
          if (i >= n) i = period - i;
        }
      }
      out_row[j] = x[base + i];
    }
    for (std::size_t k = rank >= 1 ? rank - 1 : 0; k-- > 0;) {  // next row: odometer over the leading dims
      if (++idx[k] < out_shape[k]) break;
      idx[k] = 0;
    }
  }
}

void resize_linear(const float* x, float* y, i64 planes, const std::vector<i64>& in, const std::vector<i64>& out,
                   const std::vector<double>& scale, bool align_corners) {
  const std::size_t rank = in.size();
  const i64 in_plane = product(in, 0, rank), out_plane = product(out, 0, rank);
  if (rank == 1) {
    const Taps t = linear_taps(in[0], out[0], scale[0], align_corners);
    for (i64 p = 0; p < planes; ++p) {
      const float* xp = x + p * in_plane;
      float* yp = y + p * out_plane;
      for (i64 o = 0; o < out[0]; ++o) yp[o] = t.w0[o] * xp[t.i0[o]] + t.w1[o] * xp[t.i1[o]];
    }
    return;
  }
  if (rank == 2) {
    const Taps h = linear_taps(in[0], out[0], scale[0], align_corners);
    const Taps w = linear_taps(in[1], out[1], scale[1], align_corners);
    for (i64 p = 0; p < planes; ++p) {
      const float* xp = x + p * in_plane;
      float* yp = y + p * out_plane;
      for (i64 oh = 0; oh < out[0]; ++oh) {
        const float* r0 = xp + h.i0[oh] * in[1];
        const float* r1 = xp + h.i1[oh] * in[1];
        for (i64 ow = 0; ow < out[1]; ++ow) {
          const i64 a = w.i0[ow], b = w.i1[ow];
          yp[oh * out[1] + ow] = h.w0[oh] * (w.w0[ow] * r0[a] + w.w1[ow] * r0[b]) + h.w1[oh] * (w.w0[ow] * r1[a] + w.w1[ow] * r1[b]);
        }
      }
    }
    return;
  }
  const Taps d = linear_taps(in[0], out[0], scale[0], align_corners);
  const Taps h = linear_taps(in[1], out[1], scale[1], align_corners);
  const Taps w = linear_taps(in[2], out[2], scale[2], align_corners);
  const i64 hw = in[1] * in[2];
  for (i64 p = 0; p < planes; ++p) {
    const float* xp = x + p * in_plane;
    float* yp = y + p * out_plane;
    for (i64 od = 0; od < out[0]; ++od) {
      for (i64 oh = 0; oh < out[1]; ++oh) {
        const float* r00 = xp + d.i0[od] * hw + h.i0[oh] * in[2];
        const float* r01 = xp + d.i0[od] * hw + h.i1[oh] * in[2];
        const float* r10 = xp + d.i1[od] * hw + h.i0[oh] * in[2];
        const float* r11 = xp + d.i1[od] * hw + h.i1[oh] * in[2];
        for (i64 ow = 0; ow < out[2]; ++ow) {
          const i64 a = w.i0[ow], b = w.i1[ow];
          const float w0 = w.w0[ow], w1 = w.w1[ow];
          yp[(od * out[1] + oh) * out[2] + ow] =
              d.w0[od] * (h.w0[oh] * (w0 * r00[a] + w1 * r00[b]) + h.w1[oh] * (w0 * r01[a] + w1 * r01[b])) +
              d.w1[od] * (h.w0[oh] * (w0 * r10[a] + w1 * r10[b]) + h.w1[oh] * (w0 * r11[a] + w1 * r11[b]));
        }
      }
    }
  }
}

void resize_nearest(const float* x, float* y, i64 planes, const std::vector<i64>& in, const std::vector<i64>& out,
                    const std::vector<double>& scale) {
  const std::size_t rank = in.size();
  // Per axis, the input index of each output index (PyTorch: floor(dst * scale) in float).
  std::vector<std::vector<i64>> src(rank);
  for (std::size_t a = 0; a < rank; ++a) {
    const float s = static_cast<float>(scale[a]);
    for (i64 o = 0; o < out[a]; ++o) {
      src[a].push_back(std::min<i64>(static_cast<i64>(std::floor(static_cast<float>(o) * s)), in[a] - 1));
    }
  }
  const i64 in_plane = product(in, 0, rank), out_plane = product(out, 0, rank);
  std::vector<i64> in_stride(rank, 1);
  for (std::size_t a = rank; a-- > 1;) in_stride[a - 1] = in_stride[a] * in[a];
  std::vector<i64> idx(rank, 0);
  for (i64 o = 0; o < out_plane; ++o) {
    i64 offset = 0;
    for (std::size_t a = 0; a < rank; ++a) offset += src[a][static_cast<std::size_t>(idx[a])] * in_stride[a];
    for (i64 p = 0; p < planes; ++p) y[p * out_plane + o] = x[p * in_plane + offset];
    for (std::size_t a = rank; a-- > 0;) {
      if (++idx[a] < out[a]) break;
      idx[a] = 0;
    }
  }
}

void resize_bicubic(const float* x, float* y, i64 planes, i64 in_h, i64 in_w, i64 out_h, i64 out_w, double scale_h,
                    double scale_w, bool align_corners) {
  constexpr double kA = -0.75;
  const double sh = step_of(in_h, out_h, scale_h, align_corners), sw = step_of(in_w, out_w, scale_w, align_corners);
  auto taps = [&](i64 in, i64 out, double s, std::vector<i64>& index, std::vector<double>& coeff) {
    for (i64 o = 0; o < out; ++o) {
      const double real = source_index(s, o, align_corners, true);
      const i64 base = static_cast<i64>(std::floor(real));
      const double t = real - static_cast<double>(base);
      const double c[4] = {cubic2(t + 1.0, kA), cubic1(t, kA), cubic1(1.0 - t, kA), cubic2(2.0 - t, kA)};
      for (int k = 0; k < 4; ++k) {
        index.push_back(std::clamp<i64>(base - 1 + k, 0, in - 1));
        coeff.push_back(c[k]);
      }
    }
  };
  std::vector<i64> hi, wi;
  std::vector<double> hc, wc;
  taps(in_h, out_h, sh, hi, hc);
  taps(in_w, out_w, sw, wi, wc);
  for (i64 p = 0; p < planes; ++p) {
    const float* xp = x + p * in_h * in_w;
    float* yp = y + p * out_h * out_w;
    for (i64 oh = 0; oh < out_h; ++oh) {
      for (i64 ow = 0; ow < out_w; ++ow) {
        double v = 0;
        for (int j = 0; j < 4; ++j) {
          const float* row = xp + hi[static_cast<std::size_t>(oh * 4 + j)] * in_w;
          double r = 0;
          for (int i = 0; i < 4; ++i) r += wc[static_cast<std::size_t>(ow * 4 + i)] * row[wi[static_cast<std::size_t>(ow * 4 + i)]];
          v += hc[static_cast<std::size_t>(oh * 4 + j)] * r;
        }
        yp[oh * out_w + ow] = static_cast<float>(v);
      }
    }
  }
}

void group_norm(const float* x, float* y, i64 batch, i64 channels, i64 inner, i64 groups, const float* weight,
                const float* bias, double eps) {
  const i64 per_group = channels / groups;
  const i64 size = per_group * inner;
  for (i64 n = 0; n < batch; ++n) {
    for (i64 g = 0; g < groups; ++g) {
      const i64 offset = (n * channels + g * per_group) * inner;
      const float* xg = x + offset;
      float* yg = y + offset;
      const auto [mean, inv] = moments(xg, size, eps);
      for (i64 c = 0; c < per_group; ++c) {
        const i64 channel = g * per_group + c;
        const double scale = inv * (weight ? weight[channel] : 1.0f);
        const double shift = (bias ? bias[channel] : 0.0f) - mean * scale;
        for (i64 i = 0; i < inner; ++i) yg[c * inner + i] = static_cast<float>(xg[c * inner + i] * scale + shift);
      }
    }
  }
}

void layer_norm(const float* x, float* y, i64 outer, i64 inner, const float* weight, const float* bias, double eps) {
  for (i64 r = 0; r < outer; ++r) {
    const float* xr = x + r * inner;
    float* yr = y + r * inner;
    const auto [mean, inv] = moments(xr, inner, eps);
    for (i64 i = 0; i < inner; ++i) {
      const double v = (xr[i] - mean) * inv;
      yr[i] = static_cast<float>(v * (weight ? weight[i] : 1.0f) + (bias ? bias[i] : 0.0f));
    }
  }
}

void conv1d(const Conv1d& c, const float* x, const float* w, const float* b, float* y) {
  const i64 in_per_group = c.in_channels / c.groups, out_per_group = c.out_channels / c.groups;
  for (i64 n = 0; n < c.batch; ++n) {
    for (i64 oc = 0; oc < c.out_channels; ++oc) {
      const i64 g = oc / out_per_group;
      float* yr = y + (n * c.out_channels + oc) * c.out_length;
      const float bias = b ? b[oc] : 0.0f;
      for (i64 o = 0; o < c.out_length; ++o) yr[o] = bias;
      for (i64 ic = 0; ic < in_per_group; ++ic) {
        const float* xr = x + (n * c.in_channels + g * in_per_group + ic) * c.in_length;
        const float* wr = w + (oc * in_per_group + ic) * c.kernel;
        for (i64 k = 0; k < c.kernel; ++k) {
          const float wk = wr[k];
          const i64 shift = k * c.dilation - c.padding;
          // Outputs whose input index o*stride + shift lies inside [0, in_length).
          i64 first = shift >= 0 ? 0 : (-shift + c.stride - 1) / c.stride;
          i64 last = c.in_length - 1 - shift < 0 ? -1 : (c.in_length - 1 - shift) / c.stride;
          last = std::min(last, c.out_length - 1);
          for (i64 o = first; o <= last; ++o) yr[o] += wk * xr[o * c.stride + shift];
        }
      }
    }
  }
}

void max_pool1d(const Pool1d& p, const float* x, float* y) {
  for (i64 q = 0; q < p.planes; ++q) {
    const float* xr = x + q * p.in_length;
    for (i64 o = 0; o < p.out_length; ++o) {
      float m = -std::numeric_limits<float>::infinity();
      for (i64 k = 0; k < p.kernel; ++k) {
        const i64 i = o * p.stride - p.padding + k * p.dilation;
        if (i >= 0 && i < p.in_length && (xr[i] > m || std::isnan(xr[i]))) m = xr[i];
      }
      y[q * p.out_length + o] = m;
    }
  }
}

void avg_pool1d(const Pool1d& p, const float* x, float* y) {
  for (i64 q = 0; q < p.planes; ++q) {
    const float* xr = x + q * p.in_length;
    for (i64 o = 0; o < p.out_length; ++o) {
      i64 start = o * p.stride - p.padding;
      i64 end = std::min(start + p.kernel, p.in_length + p.padding);
      const i64 pool_size = end - start;
      start = std::max<i64>(start, 0);
      end = std::min(end, p.in_length);
      double sum = 0;
      for (i64 i = start; i < end; ++i) sum += xr[i];
      const i64 divisor = p.count_include_pad ? pool_size : end - start;
      y[q * p.out_length + o] = divisor > 0 ? static_cast<float>(sum / static_cast<double>(divisor)) : 0.0f;
    }
  }
}

void adaptive_avg_pool1d(const float* x, float* y, i64 planes, i64 in, i64 out) {
  for (i64 q = 0; q < planes; ++q) {
    for (i64 o = 0; o < out; ++o) {
      const i64 start = (o * in) / out, end = ((o + 1) * in + out - 1) / out;
      double sum = 0;
      for (i64 i = start; i < end; ++i) sum += x[q * in + i];
      y[q * out + o] = static_cast<float>(sum / static_cast<double>(std::max<i64>(end - start, 1)));
    }
  }
}

void adaptive_max_pool1d(const float* x, float* y, i64 planes, i64 in, i64 out) {
  for (i64 q = 0; q < planes; ++q) {
    for (i64 o = 0; o < out; ++o) {
      const i64 start = (o * in) / out, end = ((o + 1) * in + out - 1) / out;
      float m = -std::numeric_limits<float>::infinity();
      for (i64 i = start; i < end; ++i) {
        if (x[q * in + i] > m || std::isnan(x[q * in + i])) m = x[q * in + i];
      }
      y[q * out + o] = m;
    }
  }
}

void adaptive_pool(const float* x, float* y, i64 planes, const std::vector<i64>& in, const std::vector<i64>& out, bool max) {
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
          i64 count = 0;
          for (i64 i = begin(a, id[0], od[0]); i < end(a, id[0], od[0]); ++i) {
            for (i64 j = begin(b, id[1], od[1]); j < end(b, id[1], od[1]); ++j) {
              for (i64 k = begin(c, id[2], od[2]); k < end(c, id[2], od[2]); ++k) {
                const float v = xp[(i * id[1] + j) * id[2] + k];
                sum += v;
                if (v > m || std::isnan(v)) m = v;
                ++count;
              }
            }
          }
          yp[(a * od[1] + b) * od[2] + c] = max ? m : static_cast<float>(sum / static_cast<double>(std::max<i64>(count, 1)));
        }
      }
    }
  }
}

void prelu(const float* x, const float* w, float* y, i64 batch, i64 channels, i64 inner, i64 weights) {
  for (i64 n = 0; n < batch; ++n) {
    for (i64 c = 0; c < channels; ++c) {
      const float a = w[weights == 1 ? 0 : c];
      const i64 offset = (n * channels + c) * inner;
      for (i64 i = 0; i < inner; ++i) {
        const float v = x[offset + i];
        y[offset + i] = v > 0 ? v : a * v;
      }
    }
  }
}

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
  std::vector<i64> idx(rank, 0);
  i64 offset = 0;
  for (i64 o = 0; o < total; ++o) {
    y[o] = x[offset];
    for (std::size_t d = rank; d-- > 0;) {
      offset += in_stride[d];
      if (++idx[d] < out_shape[d]) break;
      offset -= in_stride[d] * idx[d];
      idx[d] = 0;
    }
  }
}

void roll(const float* x, float* y, const std::vector<i64>& shape, const std::vector<i64>& shifts) {
  const std::size_t rank = shape.size();
  const i64 total = product(shape, 0, rank);
  if (total == 0) return;
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  // Row by row of the last dim: each output row reads one input row, rolled.
  std::vector<i64> stride(rank, 1);
  for (std::size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * shape[d + 1];
  const i64 last = shape[rank - 1], s = shifts[rank - 1];
  std::vector<i64> idx(rank - 1, 0);
  for (i64 row = 0; row < total / last; ++row) {
    i64 from = 0;
    for (std::size_t d = 0; d + 1 < rank; ++d) from += ((idx[d] - shifts[d] + shape[d]) % shape[d]) * stride[d];
    float* out = y + row * last;
    std::memcpy(out + s, x + from, static_cast<std::size_t>(last - s) * sizeof(float));
    std::memcpy(out, x + from + last - s, static_cast<std::size_t>(s) * sizeof(float));
    for (std::size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

void compare(Compare op, const float* a, const float* b, float* y, i64 count, i64 b_stride) {
  for (i64 i = 0; i < count; ++i) {
    const float p = a[i], q = b[i * b_stride];
    bool r = false;
    switch (op) {
      case Compare::kEq: r = p == q; break;
      case Compare::kNe: r = p != q; break;
      case Compare::kLt: r = p < q; break;
      case Compare::kLe: r = p <= q; break;
      case Compare::kGt: r = p > q; break;
      case Compare::kGe: r = p >= q; break;
    }
    y[i] = r ? 1.0f : 0.0f;
  }
}

void masked_fill(const float* x, const float* mask, float value, float* y, i64 count) {
  for (i64 i = 0; i < count; ++i) y[i] = mask[i] != 0 ? value : x[i];
}

void fill(float* y, float value, i64 count) { std::fill(y, y + count, value); }

void slice_scatter(const float* x, const float* src, float* y, i64 outer, i64 size, i64 inner, i64 start, i64 step,
                   i64 length) {
  if (x != y) std::memcpy(y, x, static_cast<std::size_t>(outer * size * inner) * sizeof(float));
  for (i64 o = 0; o < outer; ++o) {
    for (i64 l = 0; l < length; ++l) {
      std::memcpy(y + (o * size + start + l * step) * inner, src + (o * length + l) * inner, static_cast<std::size_t>(inner) * sizeof(float));
    }
  }
}

void log_softmax(const float* x, float* y, i64 rows, i64 length) {
  for (i64 r = 0; r < rows; ++r) {
    const float* xr = x + r * length;
    float* yr = y + r * length;
    float m = -std::numeric_limits<float>::infinity();
    for (i64 i = 0; i < length; ++i) m = std::max(m, xr[i]);
    double sum = 0;
    for (i64 i = 0; i < length; ++i) sum += std::exp(static_cast<double>(xr[i] - m));
    const float shift = m + static_cast<float>(std::log(sum));
    for (i64 i = 0; i < length; ++i) yr[i] = xr[i] - shift;
  }
}

void attention(const Attention& a, const float* q, const float* k, const float* v, float* context, float* weights) {
  const i64 e = a.embed, d = a.embed / a.heads, l = a.query_length, s = a.key_length;
  // Every inner loop is a contiguous multiply-add over one row, which the
  // compiler vectorizes: k transposed per head, then scores += q[c] * kT[c].
  std::vector<float> kt(static_cast<std::size_t>(d * s)), scores(static_cast<std::size_t>(s));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  if (weights && a.average) std::fill(weights, weights + a.batch * l * s, 0.0f);
  for (i64 n = 0; n < a.batch; ++n) {
    for (i64 h = 0; h < a.heads; ++h) {
      for (i64 j = 0; j < s; ++j) {
        const float* kj = k + (n * s + j) * e + h * d;
        for (i64 c = 0; c < d; ++c) kt[static_cast<std::size_t>(c * s + j)] = kj[c];
      }
      for (i64 i = 0; i < l; ++i) {
        const float* qi = q + (n * l + i) * e + h * d;
        float* sc = scores.data();
        std::fill(sc, sc + s, 0.0f);
        for (i64 c = 0; c < d; ++c) {
          const float qc = qi[c] * scale;
          const float* kc = kt.data() + c * s;
          for (i64 j = 0; j < s; ++j) sc[j] += qc * kc[j];
        }
        float m = -std::numeric_limits<float>::infinity();
        for (i64 j = 0; j < s; ++j) m = std::max(m, sc[j]);
        float sum = 0;
        for (i64 j = 0; j < s; ++j) sum += (sc[j] = std::exp(sc[j] - m));
        const float inv = 1.0f / sum;
        for (i64 j = 0; j < s; ++j) sc[j] *= inv;
        float* ci = context + (n * l + i) * e + h * d;
        std::fill(ci, ci + d, 0.0f);
        for (i64 j = 0; j < s; ++j) {
          const float p = sc[j];
          const float* vj = v + (n * s + j) * e + h * d;
          for (i64 c = 0; c < d; ++c) ci[c] += p * vj[c];
        }
        if (weights) {
          for (i64 j = 0; j < s; ++j) {
            if (a.average) weights[(n * l + i) * s + j] += sc[j] / static_cast<float>(a.heads);
            else weights[((n * a.heads + h) * l + i) * s + j] = sc[j];
          }
        }
      }
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
