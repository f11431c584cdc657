// Attention: multi-head on projected queries, keys and values
// (_native_multi_head_attention), and scaled_dot_product_attention.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tracegraph::xnnpack::portable {

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

void sdpa(const Sdpa& a, const float* q, const float* k, const float* v, const float* mask, float* out, i64 first, i64 count) {
  const i64 L = a.query_length, S = a.key_length, E = a.embed, Ev = a.value_embed;
  std::vector<double> p(static_cast<std::size_t>(S));
  std::vector<double> acc(static_cast<std::size_t>(Ev));
  for (i64 row = first; row < first + count; ++row) {
    const i64 b = row / L, i = row % L;
    const float* qi = q + row * E;
    const float* kb = k + b * S * E;
    const float* vb = v + b * S * Ev;
    const float* mi = mask ? mask + row * S : nullptr;
    double top = -std::numeric_limits<double>::infinity();
    for (i64 j = 0; j < S; ++j) {
      double score = -std::numeric_limits<double>::infinity();
      const bool dropped = (a.causal && j > i) || (mi && a.mask_keeps && mi[j] == 0);
      if (!dropped) {
        double dot = 0;
        for (i64 e = 0; e < E; ++e) dot += static_cast<double>(qi[e]) * kb[j * E + e];
        score = dot * a.scale + (mi && !a.mask_keeps ? mi[j] : 0.0);
      }
      p[static_cast<std::size_t>(j)] = score;
      top = std::max(top, score);
    }
    double sum = 0;
    for (i64 j = 0; j < S; ++j) sum += p[static_cast<std::size_t>(j)] = std::exp(p[static_cast<std::size_t>(j)] - top);
    std::fill(acc.begin(), acc.end(), 0.0);
    for (i64 j = 0; j < S; ++j) {
      const double w = p[static_cast<std::size_t>(j)] / sum;
      if (w == 0) continue;
      for (i64 e = 0; e < Ev; ++e) acc[static_cast<std::size_t>(e)] += w * vb[j * Ev + e];
    }
    float* oi = out + row * Ev;
    // No key left (top is -inf): zeros, as torch's _safe_softmax gives.
    const bool none_left = std::isinf(top) && top < 0;
    for (i64 e = 0; e < Ev; ++e) oi[e] = none_left ? 0.0f : static_cast<float>(acc[static_cast<std::size_t>(e)]);
  }
}

}  // namespace tracegraph::xnnpack::portable
