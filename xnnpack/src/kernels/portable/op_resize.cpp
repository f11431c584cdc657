// Linear, bilinear, trilinear, nearest and bicubic resizes with PyTorch's coordinates.
#include "kernels/portable/portable.h"
#include "kernels/portable/util.h"

#include <algorithm>
#include <cmath>

namespace tracegraph::xnnpack::portable {
namespace {

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

double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

}  // namespace

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
                    const std::vector<double>& scale, bool exact) {
  const std::size_t rank = in.size();
  // Per axis, the input index of each output index (PyTorch: floor(dst * scale)
  // in float; nearest-exact: floor((dst + 0.5) * scale)).
  const float shift = exact ? 0.5f : 0.0f;
  std::vector<std::vector<i64>> src(rank);
  for (std::size_t a = 0; a < rank; ++a) {
    const float s = static_cast<float>(scale[a]);
    for (i64 o = 0; o < out[a]; ++o) {
      src[a].push_back(std::min<i64>(static_cast<i64>(std::floor((static_cast<float>(o) + shift) * s)), in[a] - 1));
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

}  // namespace tracegraph::xnnpack::portable
