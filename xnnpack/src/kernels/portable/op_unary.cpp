// Elementwise functions of one tensor: the activations and math XNNPACK has no operator for, pow and rsub with a number.
#include "kernels/portable/portable.h"

#include <cmath>

#include "kernels/layout.h"

namespace tracegraph::xnnpack::portable {

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
    case Unary::kSin:
      for (i64 i = 0; i < count; ++i) y[i] = std::sin(x[i]);
      break;
    case Unary::kCos:
      for (i64 i = 0; i < count; ++i) y[i] = std::cos(x[i]);
      break;
    case Unary::kTan:
      for (i64 i = 0; i < count; ++i) y[i] = std::tan(x[i]);
      break;
    case Unary::kFloor:
      for (i64 i = 0; i < count; ++i) y[i] = std::floor(x[i]);
      break;
    case Unary::kCeil:
      for (i64 i = 0; i < count; ++i) y[i] = std::ceil(x[i]);
      break;
    case Unary::kRound:  // half to even, as torch.round
      for (i64 i = 0; i < count; ++i) y[i] = std::nearbyint(x[i]);
      break;
    case Unary::kTrunc:
      for (i64 i = 0; i < count; ++i) y[i] = std::trunc(x[i]);
      break;
    case Unary::kReciprocal:
      for (i64 i = 0; i < count; ++i) y[i] = 1.0f / x[i];
      break;
    case Unary::kSign:  // NaN stays NaN
      for (i64 i = 0; i < count; ++i) y[i] = x[i] > 0 ? 1.0f : x[i] < 0 ? -1.0f : x[i] == 0 ? 0.0f : x[i];
      break;
    case Unary::kLog1p:
      for (i64 i = 0; i < count; ++i) y[i] = std::log1p(x[i]);
      break;
    case Unary::kExpm1:
      for (i64 i = 0; i < count; ++i) y[i] = std::expm1(x[i]);
      break;
    case Unary::kLog2:
      for (i64 i = 0; i < count; ++i) y[i] = std::log2(x[i]);
      break;
    case Unary::kLog10:
      for (i64 i = 0; i < count; ++i) y[i] = std::log10(x[i]);
      break;
    case Unary::kAcos:
      for (i64 i = 0; i < count; ++i) y[i] = std::acos(x[i]);
      break;
    case Unary::kAsin:
      for (i64 i = 0; i < count; ++i) y[i] = std::asin(x[i]);
      break;
    case Unary::kAtan:
      for (i64 i = 0; i < count; ++i) y[i] = std::atan(x[i]);
      break;
    case Unary::kCosh:
      for (i64 i = 0; i < count; ++i) y[i] = std::cosh(x[i]);
      break;
    case Unary::kSinh:
      for (i64 i = 0; i < count; ++i) y[i] = std::sinh(x[i]);
      break;
    case Unary::kSoftplus:  // beta 1, threshold 20, as torch's default
      for (i64 i = 0; i < count; ++i) y[i] = x[i] > 20.0f ? x[i] : std::log1p(std::exp(x[i]));
      break;
    case Unary::kLogicalNot:
      for (i64 i = 0; i < count; ++i) y[i] = x[i] == 0 ? 1.0f : 0.0f;
      break;
    case Unary::kAcosh:
      for (i64 i = 0; i < count; ++i) y[i] = std::acosh(x[i]);
      break;
    case Unary::kAsinh:
      for (i64 i = 0; i < count; ++i) y[i] = std::asinh(x[i]);
      break;
    case Unary::kAtanh:
      for (i64 i = 0; i < count; ++i) y[i] = std::atanh(x[i]);
      break;
    case Unary::kIsinf:
      for (i64 i = 0; i < count; ++i) y[i] = std::isinf(x[i]) ? 1.0f : 0.0f;
      break;
    case Unary::kIsnan:
      for (i64 i = 0; i < count; ++i) y[i] = std::isnan(x[i]) ? 1.0f : 0.0f;
      break;
    case Unary::kIsfinite:
      for (i64 i = 0; i < count; ++i) y[i] = std::isfinite(x[i]) ? 1.0f : 0.0f;
      break;
    case Unary::kBitwiseNotInt:
      for (i64 i = 0; i < count; ++i) y[i] = -x[i] - 1.0f;
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

}  // namespace tracegraph::xnnpack::portable
