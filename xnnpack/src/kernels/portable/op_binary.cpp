// Elementwise ops of two tensors XNNPACK has no operator for here: maximum,
// minimum, logical and/or/xor, atan2, pow, fmod, remainder, the rounded
// divisions; and nan_to_num.
#include "kernels/portable/portable.h"

#include <cmath>

namespace tracegraph::xnnpack::portable {

void binary(Binary op, const float* a, const float* b, float* y, i64 count) {
  for (i64 i = 0; i < count; ++i) {
    const float p = a[i], q = b[i];
    switch (op) {
      case Binary::kMaximum: y[i] = std::isnan(p) || std::isnan(q) ? NAN : (p > q ? p : q); break;
      case Binary::kMinimum: y[i] = std::isnan(p) || std::isnan(q) ? NAN : (p < q ? p : q); break;
      case Binary::kLogicalAnd: y[i] = p != 0 && q != 0 ? 1.0f : 0.0f; break;
      case Binary::kLogicalOr: y[i] = p != 0 || q != 0 ? 1.0f : 0.0f; break;
      case Binary::kLogicalXor: y[i] = (p != 0) != (q != 0) ? 1.0f : 0.0f; break;
      case Binary::kAtan2: y[i] = std::atan2(p, q); break;
      case Binary::kPow: y[i] = std::pow(p, q); break;
      case Binary::kFmod: y[i] = std::fmod(p, q); break;
      case Binary::kRemainder: {
        const float r = std::fmod(p, q);
        y[i] = r != 0 && ((r < 0) != (q < 0)) ? r + q : r;
        break;
      }
      case Binary::kFloorDivide: y[i] = std::floor(p / q); break;
      case Binary::kDivTrunc: y[i] = std::trunc(p / q); break;
      case Binary::kBitwiseAnd: y[i] = static_cast<float>(std::llrint(p) & std::llrint(q)); break;
      case Binary::kBitwiseOr: y[i] = static_cast<float>(std::llrint(p) | std::llrint(q)); break;
      case Binary::kBitwiseXor: y[i] = static_cast<float>(std::llrint(p) ^ std::llrint(q)); break;
      case Binary::kHypot: y[i] = std::hypot(p, q); break;
    }
  }
}

void nan_to_num(const float* x, float* y, i64 count, float nan, float posinf, float neginf) {
  for (i64 i = 0; i < count; ++i) y[i] = std::isnan(x[i]) ? nan : x[i] == INFINITY ? posinf : x[i] == -INFINITY ? neginf : x[i];
}

}  // namespace tracegraph::xnnpack::portable
