// int64 tensors, exact (lower/integer.cpp): elementwise ops with broadcast,
// comparisons, where, clamp, reductions, cumsum, casts to narrower integers,
// and the conversions to and from the float32 the other kernels read.
// Arithmetic wraps around as torch's does (two's complement), never
// overflowing a signed type in C++.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {
namespace {

using u64 = std::uint64_t;

i64 wrap_add(i64 a, i64 b) { return static_cast<i64>(static_cast<u64>(a) + static_cast<u64>(b)); }
i64 wrap_sub(i64 a, i64 b) { return static_cast<i64>(static_cast<u64>(a) - static_cast<u64>(b)); }
i64 wrap_mul(i64 a, i64 b) { return static_cast<i64>(static_cast<u64>(a) * static_cast<u64>(b)); }

// Division rounded toward zero, INT64_MIN / -1 wrapping to INT64_MIN (b != 0).
i64 div_trunc(i64 a, i64 b) { return b == -1 ? wrap_sub(0, a) : a / b; }
i64 div_floor(i64 a, i64 b) {
  const i64 q = div_trunc(a, b);
  return (b != -1 && a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
i64 mod_trunc(i64 a, i64 b) { return b == -1 ? 0 : a % b; }
i64 mod_floor(i64 a, i64 b) {
  const i64 r = mod_trunc(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Per input, its strides over `out` (0 where it broadcasts; its shape right-aligned).
std::vector<i64> strides_over(const std::vector<i64>& in, const std::vector<i64>& out) {
  const std::size_t lead = out.size() - in.size();
  std::vector<i64> s(out.size(), 0);
  i64 stride = 1;
  for (std::size_t d = in.size(); d-- > 0;) {
    s[lead + d] = in[d] == 1 ? 0 : stride;
    stride *= in[d];
  }
  return s;
}

// f(o, offset in a, offset in b) over every element o of `out`.
template <class F>
void walk2(const std::vector<i64>& a_shape, const std::vector<i64>& b_shape, const std::vector<i64>& out, F f) {
  const i64 total = product(out, 0, out.size());
  if (a_shape == out && b_shape == out) {
    for (i64 o = 0; o < total; ++o) f(o, o, o);
    return;
  }
  StridedWalk wa(out, strides_over(a_shape, out)), wb(out, strides_over(b_shape, out));
  for (i64 o = 0; o < total; ++o, wa.next(), wb.next()) f(o, wa.offset(), wb.offset());
}

}  // namespace

void int_unary(IntUnary op, const i64* x, i64* y, i64 count) {
  for (i64 k = 0; k < count; ++k) {
    const i64 v = x[k];
    switch (op) {
      case IntUnary::kAbs: y[k] = v < 0 ? wrap_sub(0, v) : v; break;
      case IntUnary::kNeg: y[k] = wrap_sub(0, v); break;
      case IntUnary::kSign: y[k] = (v > 0) - (v < 0); break;
      case IntUnary::kBitwiseNot: y[k] = ~v; break;
    }
  }
}

i64 int_binary(IntBinary op, const i64* a, const std::vector<i64>& a_shape, const i64* b, const std::vector<i64>& b_shape, i64* y,
               const std::vector<i64>& out_shape, i64 alpha) {
  i64 zero_at = -1;
  const bool divides = op == IntBinary::kFloorDivide || op == IntBinary::kDivTrunc || op == IntBinary::kRemainder || op == IntBinary::kFmod;
  if (divides) {  // torch refuses an integer division by zero: find it before writing (y may be a)
    walk2(a_shape, b_shape, out_shape, [&](i64 o, i64, i64 ob) {
      if (zero_at < 0 && b[ob] == 0) zero_at = o;
    });
    if (zero_at >= 0) return zero_at;
  }
  walk2(a_shape, b_shape, out_shape, [&](i64 o, i64 oa, i64 ob) {
    const i64 p = a[oa], q = b[ob];
    switch (op) {
      case IntBinary::kAdd: y[o] = wrap_add(p, wrap_mul(q, alpha)); break;
      case IntBinary::kSub: y[o] = wrap_sub(p, wrap_mul(q, alpha)); break;
      case IntBinary::kMul: y[o] = wrap_mul(p, q); break;
      case IntBinary::kFloorDivide: y[o] = div_floor(p, q); break;
      case IntBinary::kDivTrunc: y[o] = div_trunc(p, q); break;
      case IntBinary::kRemainder: y[o] = mod_floor(p, q); break;
      case IntBinary::kFmod: y[o] = mod_trunc(p, q); break;
      case IntBinary::kAnd: y[o] = p & q; break;
      case IntBinary::kOr: y[o] = p | q; break;
      case IntBinary::kXor: y[o] = p ^ q; break;
      case IntBinary::kMaximum: y[o] = std::max(p, q); break;
      case IntBinary::kMinimum: y[o] = std::min(p, q); break;
    }
  });
  return -1;
}

void int_compare(IntCompare op, const i64* a, const std::vector<i64>& a_shape, const i64* b, const std::vector<i64>& b_shape, float* y,
                 const std::vector<i64>& out_shape) {
  walk2(a_shape, b_shape, out_shape, [&](i64 o, i64 oa, i64 ob) {
    const i64 p = a[oa], q = b[ob];
    bool r = false;
    switch (op) {
      case IntCompare::kEq: r = p == q; break;
      case IntCompare::kNe: r = p != q; break;
      case IntCompare::kLt: r = p < q; break;
      case IntCompare::kLe: r = p <= q; break;
      case IntCompare::kGt: r = p > q; break;
      case IntCompare::kGe: r = p >= q; break;
    }
    y[o] = r ? 1.0f : 0.0f;
  });
}

void int_where(const float* cond, const std::vector<i64>& c_shape, const i64* a, const std::vector<i64>& a_shape, const i64* b,
               const std::vector<i64>& b_shape, i64* y, const std::vector<i64>& out_shape) {
  const i64 total = product(out_shape, 0, out_shape.size());
  StridedWalk wc(out_shape, strides_over(c_shape, out_shape)), wa(out_shape, strides_over(a_shape, out_shape)),
      wb(out_shape, strides_over(b_shape, out_shape));
  for (i64 o = 0; o < total; ++o, wc.next(), wa.next(), wb.next()) y[o] = cond[wc.offset()] != 0 ? a[wa.offset()] : b[wb.offset()];
}

void int_clamp(const i64* x, i64* y, i64 count, i64 lo, i64 hi) {
  for (i64 k = 0; k < count; ++k) y[k] = std::min(std::max(x[k], lo), hi);  // torch: min first, then max (hi wins where lo > hi)
}

void int_reduce(IntReduce op, const i64* x, const std::vector<i64>& shape, const std::vector<bool>& reduced, i64* y) {
  // The kept dims in order, then the reduced ones: each output gathers its reduced elements.
  std::vector<i64> kept_shape, kept_stride, red_shape, red_stride, stride(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d]) red_shape.push_back(shape[d]), red_stride.push_back(stride[d]);
    else kept_shape.push_back(shape[d]), kept_stride.push_back(stride[d]);
  }
  const i64 outs = product(kept_shape, 0, kept_shape.size()), each = product(red_shape, 0, red_shape.size());
  StridedWalk wo(kept_shape, kept_stride);
  for (i64 o = 0; o < outs; ++o, wo.next()) {
    StridedWalk wr(red_shape, red_stride, wo.offset());
    i64 acc = op == IntReduce::kSum ? 0 : op == IntReduce::kProd ? 1 : x[wr.offset()];
    for (i64 r = 0; r < each; ++r, wr.next()) {
      const i64 v = x[wr.offset()];
      switch (op) {
        case IntReduce::kSum: acc = wrap_add(acc, v); break;
        case IntReduce::kProd: acc = wrap_mul(acc, v); break;
        case IntReduce::kMax: acc = std::max(acc, v); break;
        case IntReduce::kMin: acc = std::min(acc, v); break;
      }
    }
    y[o] = acc;
  }
}

void int_cumsum(const i64* x, i64* y, i64 outer, i64 length, i64 inner, bool product_of) {
  for (i64 o = 0; o < outer; ++o) {
    for (i64 i = 0; i < inner; ++i) {
      i64 acc = product_of ? 1 : 0;
      for (i64 k = 0; k < length; ++k) {
        const i64 at = (o * length + k) * inner + i;
        acc = product_of ? wrap_mul(acc, x[at]) : wrap_add(acc, x[at]);
        y[at] = acc;
      }
    }
  }
}

void int_narrow_type(const i64* x, i64* y, i64 count, int bits, bool is_unsigned) {
  for (i64 k = 0; k < count; ++k) {
    const u64 low = static_cast<u64>(x[k]) & (bits == 64 ? ~u64{0} : (u64{1} << bits) - 1);
    if (is_unsigned || bits == 64) y[k] = static_cast<i64>(low);
    else y[k] = (low >> (bits - 1)) ? static_cast<i64>(low) - (i64{1} << bits) : static_cast<i64>(low);  // sign-extended
  }
}

i64 int_to_float(const i64* x, float* y, i64 count, bool exact) {
  constexpr i64 kExact = i64{1} << 24;
  for (i64 k = 0; k < count; ++k) {
    if (exact && (x[k] > kExact || x[k] < -kExact)) return k;
    y[k] = static_cast<float>(x[k]);
  }
  return -1;
}

void float_to_int(const float* x, i64* y, i64 count) {
  constexpr float kLimit = 9223372036854775808.0f;  // 2^63: casts from it on (and of NaN) are undefined in C++
  for (i64 k = 0; k < count; ++k) {
    const float v = x[k];
    y[k] = std::isnan(v) ? 0 : v >= kLimit ? std::numeric_limits<i64>::max() : v < -kLimit ? std::numeric_limits<i64>::min() : static_cast<i64>(v);
  }
}

}  // namespace tracegraph::xnnpack::portable
