// The backward ops of PyTorch's core ATen opset (what a training graph from
// torch.export or AOTAutograd holds): the gradients of pooling, embedding,
// layer and group norm and convolution, as plain loops.
#include "kernels/portable/portable.h"
#include "kernels/portable/util.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tracegraph::xnnpack::portable {

bool max_pool_backward(const float* grad_out, const float* indices, float* grad_in, i64 planes, i64 in_plane, i64 out_plane, double* bad) {
  std::fill(grad_in, grad_in + planes * in_plane, 0.0f);
  for (i64 p = 0; p < planes; ++p)
    for (i64 o = 0; o < out_plane; ++o) {
      const float at = indices[p * out_plane + o];
      if (!(at >= 0 && at < static_cast<float>(in_plane))) {
        *bad = at;
        return false;
      }
      grad_in[p * in_plane + static_cast<i64>(at)] += grad_out[p * out_plane + o];
    }
  return true;
}

void avg_pool_backward(const AvgPool& p, const float* grad_out, float* grad_in) {
  const AvgPool3 g(p);  // the forward's windows and divisors (op_avg_pool.cpp)
  const i64 in_plane = g.in[0] * g.in[1] * g.in[2], out_plane = g.out[0] * g.out[1] * g.out[2];
  std::fill(grad_in, grad_in + p.planes * in_plane, 0.0f);
  for (i64 c = 0; c < p.planes; ++c) {
    float* gp = grad_in + c * in_plane;
    for (i64 od = 0; od < g.out[0]; ++od)
      for (i64 oh = 0; oh < g.out[1]; ++oh)
        for (i64 ow = 0; ow < g.out[2]; ++ow) {
          const AvgPool3::Span &sd = g.spans[0][od], &sh = g.spans[1][oh], &sw = g.spans[2][ow];
          const float share = grad_out[c * out_plane + (od * g.out[1] + oh) * g.out[2] + ow] / static_cast<float>(g.divisor(sd, sh, sw));
          for (i64 d = sd.lo; d < sd.hi; ++d)
            for (i64 h = sh.lo; h < sh.hi; ++h)
              for (i64 i = sw.lo; i < sw.hi; ++i) gp[(d * g.in[1] + h) * g.in[2] + i] += share;
        }
  }
}

void adaptive_avg_pool2d_backward(const float* grad_out, float* grad_in, i64 planes, i64 in_h, i64 in_w, i64 out_h, i64 out_w) {
  std::fill(grad_in, grad_in + planes * in_h * in_w, 0.0f);
  for (i64 c = 0; c < planes; ++c)
    for (i64 oh = 0; oh < out_h; ++oh) {
      const i64 h0 = oh * in_h / out_h, h1 = ((oh + 1) * in_h + out_h - 1) / out_h;
      for (i64 ow = 0; ow < out_w; ++ow) {
        const i64 w0 = ow * in_w / out_w, w1 = ((ow + 1) * in_w + out_w - 1) / out_w;
        const float g = grad_out[(c * out_h + oh) * out_w + ow] / static_cast<float>((h1 - h0) * (w1 - w0));
        for (i64 h = h0; h < h1; ++h)
          for (i64 w = w0; w < w1; ++w) grad_in[(c * in_h + h) * in_w + w] += g;
      }
    }
}

bool embedding_backward(const float* grad_out, const float* indices, float* grad_weight, i64 count, i64 dim, i64 num_weights, i64 padding_idx,
                        bool scale_grad_by_freq, double* bad) {
  std::fill(grad_weight, grad_weight + num_weights * dim, 0.0f);
  std::vector<i64> frequency(scale_grad_by_freq ? static_cast<std::size_t>(num_weights) : 0, 0);
  for (i64 i = 0; i < count; ++i) {
    const float at = indices[i];
    if (!(at >= 0 && at < static_cast<float>(num_weights))) {
      *bad = at;
      return false;
    }
    if (scale_grad_by_freq) ++frequency[static_cast<std::size_t>(at)];
  }
  for (i64 i = 0; i < count; ++i) {
    const auto row = static_cast<i64>(indices[i]);
    if (row == padding_idx) continue;
    const float scale = scale_grad_by_freq ? 1.0f / static_cast<float>(frequency[static_cast<std::size_t>(row)]) : 1.0f;
    for (i64 j = 0; j < dim; ++j) grad_weight[row * dim + j] += grad_out[i * dim + j] * scale;
  }
  return true;
}

void norm_backward(const NormBackward& a, const float* grad_out, const float* x, const float* mean, const float* rstd, const float* weight,
                   float* grad_in, float* grad_weight, float* grad_bias) {
  // Sample n's group g is channels [g * per_group, (g + 1) * per_group) of
  // `inner` elements each; with xhat = (x - mean) * rstd and h = grad * weight,
  // grad_in = rstd * (h - mean(h) - xhat * mean(h * xhat)) over the group.
  const i64 per_group = a.channels / a.groups, size = per_group * a.inner;
  if (grad_weight) std::fill(grad_weight, grad_weight + a.channels, 0.0f);
  if (grad_bias) std::fill(grad_bias, grad_bias + a.channels, 0.0f);
  for (i64 n = 0; n < a.batch; ++n)
    for (i64 g = 0; g < a.groups; ++g) {
      const i64 offset = (n * a.channels + g * per_group) * a.inner;
      const double m = mean[n * a.groups + g], r = rstd[n * a.groups + g];
      double sum_h = 0, sum_hx = 0;
      for (i64 c = 0; c < per_group; ++c) {
        const i64 channel = g * per_group + c;
        const double w = weight ? weight[channel] : 1.0;
        double dw = 0, db = 0;
        for (i64 i = 0; i < a.inner; ++i) {
          const i64 k = offset + c * a.inner + i;
          const double xhat = (x[k] - m) * r, dy = grad_out[k];
          sum_h += dy * w, sum_hx += dy * w * xhat, dw += dy * xhat, db += dy;
        }
        if (grad_weight) grad_weight[channel] += static_cast<float>(dw);
        if (grad_bias) grad_bias[channel] += static_cast<float>(db);
      }
      if (!grad_in) continue;
      const double mean_h = sum_h / static_cast<double>(size), mean_hx = sum_hx / static_cast<double>(size);
      for (i64 c = 0; c < per_group; ++c) {
        const double w = weight ? weight[g * per_group + c] : 1.0;
        for (i64 i = 0; i < a.inner; ++i) {
          const i64 k = offset + c * a.inner + i;
          const double xhat = (x[k] - m) * r;
          grad_in[k] = static_cast<float>(r * (grad_out[k] * w - mean_h - xhat * mean_hx));
        }
      }
    }
}

void conv_backward(const ConvBackward& a, const float* grad_out, const float* x, const float* weight, float* grad_in, float* grad_weight,
                   float* grad_bias) {
  // Up to 3 spatial dims, the missing leading ones of size 1. The forward's
  // pairs of (input position, output position) through each tap: for a
  // convolution o * stride - padding + k * dilation = i, for a transposed
  // one i * stride - padding + k * dilation = o.
  const std::size_t rank = a.in.size();
  i64 in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  for (std::size_t i = 0; i < rank; ++i) {
    const std::size_t d = 3 - rank + i;
    in[d] = a.in[i], out[d] = a.out[i], kernel[d] = a.kernel[i], stride[d] = a.stride[i], pad[d] = a.padding[i], dil[d] = a.dilation[i];
  }
  const i64 in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2], taps = kernel[0] * kernel[1] * kernel[2];
  const i64 in_g = a.in_channels / a.groups, out_g = a.out_channels / a.groups;
  if (grad_in) std::fill(grad_in, grad_in + a.batch * a.in_channels * in_plane, 0.0f);
  if (grad_weight) std::fill(grad_weight, grad_weight + a.out_channels * in_g * taps, 0.0f);  // [out, in / g, k...] or [in, out / g, k...]: as many
  if (grad_bias) {
    for (i64 c = 0; c < a.out_channels; ++c) {
      double sum = 0;
      for (i64 n = 0; n < a.batch; ++n)
        for (i64 o = 0; o < out_plane; ++o) sum += grad_out[(n * a.out_channels + c) * out_plane + o];
      grad_bias[c] = static_cast<float>(sum);
    }
  }
  // The positions a tap links: over the small side (the output of a
  // convolution, the input of a transposed one), the large side's position or -1.
  const i64 small[3] = {a.transposed ? in[0] : out[0], a.transposed ? in[1] : out[1], a.transposed ? in[2] : out[2]};
  const i64 large[3] = {a.transposed ? out[0] : in[0], a.transposed ? out[1] : in[1], a.transposed ? out[2] : in[2]};
  for (i64 n = 0; n < a.batch; ++n)
    for (i64 g = 0; g < a.groups; ++g)
      for (i64 ci = 0; ci < in_g; ++ci)
        for (i64 co = 0; co < out_g; ++co) {
          const i64 cin = g * in_g + ci, cout = g * out_g + co;
          // weight [out, in / groups, k...] for a convolution, [in, out / groups, k...] for a transposed one.
          const i64 wbase = a.transposed ? (cin * out_g + co) * taps : (cout * in_g + ci) * taps;
          const float* xp = x + (n * a.in_channels + cin) * in_plane;
          const float* gop = grad_out + (n * a.out_channels + cout) * out_plane;
          float* gip = grad_in ? grad_in + (n * a.in_channels + cin) * in_plane : nullptr;
          for (i64 kd = 0; kd < kernel[0]; ++kd)
            for (i64 kh = 0; kh < kernel[1]; ++kh)
              for (i64 kw = 0; kw < kernel[2]; ++kw) {
                const i64 t = (kd * kernel[1] + kh) * kernel[2] + kw;
                const float w = weight[wbase + t];
                double dw = 0;
                for (i64 sd = 0; sd < small[0]; ++sd) {
                  const i64 ld = sd * stride[0] - pad[0] + kd * dil[0];
                  if (ld < 0 || ld >= large[0]) continue;
                  for (i64 sh = 0; sh < small[1]; ++sh) {
                    const i64 lh = sh * stride[1] - pad[1] + kh * dil[1];
                    if (lh < 0 || lh >= large[1]) continue;
                    for (i64 sw = 0; sw < small[2]; ++sw) {
                      const i64 lw = sw * stride[2] - pad[2] + kw * dil[2];
                      if (lw < 0 || lw >= large[2]) continue;
                      const i64 s = (sd * small[1] + sh) * small[2] + sw, l = (ld * large[1] + lh) * large[2] + lw;
                      const i64 i = a.transposed ? s : l, o = a.transposed ? l : s;
                      if (gip) gip[i] += gop[o] * w;
                      dw += static_cast<double>(gop[o]) * xp[i];
                    }
                  }
                }
                if (grad_weight) grad_weight[wbase + t] += static_cast<float>(dw);
              }
        }
}

}  // namespace tracegraph::xnnpack::portable
