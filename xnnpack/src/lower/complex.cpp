// Complex tensors and the Fourier transforms that make them. A complex
// tensor's slot holds its (real, imaginary) pairs as floats, torch's shape
// with a last dim of 2 (view_as_real's layout, so view_as_real and
// view_as_complex are the same bytes), in torch's order. The transforms run
// one axis at a time, each a GEMM of XNNPACK's with the DFT matrix
// (dft_matrix) over the lines along that axis, moved last by a transpose;
// lines longer than kGemmLength run on a kernel of ours. The ops of
// takes_complex() read complex slots, and the layout ops of
// layout_op_on_pairs() move them as pairs; Runtime::plan refuses the others.
#include "lower/complex.h"
#include "lower/arguments.h"
#include "lower/broadcast.h"
#include "lower/gemm.h"

namespace tracegraph::xnnpack {
namespace {

using portable::Dft;
using portable::DftAxis;

// A line up to this length goes through XNNPACK's GEMM: its DFT matrix is
// (2n)^2 floats, 16 MiB at 1024. Longer lines, a kernel of ours.
constexpr i64 kGemmLength = 1024;

// torch's normalization codes for _fft_r2c/_fft_c2r/_fft_c2c.
enum Norm : i64 { kNone = 0, kByRootN = 1, kByN = 2 };

// The real (lane 0) or imaginary (lane 1) parts of complex slot x, a tensor of their own.
int complex_part(Context& cx, int x, i64 lane) {
  const i64 count = numel(cx.slot(x).shape) / 2;  // before new_tensor(), which may move the slots
  const int out = cx.new_tensor(logical(cx.slot(x)), false);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, count, lane] {
    const float* a = cx.ptr(x);
    float* y = cx.ptr(out);
    for (i64 i = 0; i < count; ++i) y[i] = a[2 * i + lane];
  };
  return out;
}

int complex_tensor(Context& cx, Shape shape) {
  shape.push_back(2);
  const int s = cx.new_tensor(std::move(shape), false);
  cx.slot(s).complex = true;
  return s;
}

std::size_t axis_of(const Context& cx, const Node& n, i64 dim, std::size_t rank) {
  const i64 r = static_cast<i64>(rank);
  if (dim < -r || dim >= r) fail(ErrorCode::kSchema, cx.where(n) + ": dim " + std::to_string(dim) + " out of range for rank " + std::to_string(rank));
  return static_cast<std::size_t>(dim < 0 ? dim + r : dim);
}

// One transform along logical axis `axis` of slot `x` (complex, or real for
// kR2C); `a`'s in_len is x's size there. The result's slot, complex unless kC2R.
int dft_axis(Context& cx, const Node& n, NodeState& st, std::size_t k, int x, std::size_t axis, DftAxis a) {
  if (k >= 64) fail(ErrorCode::kLimitExceeded, cx.where(n) + ": a transform over more than 63 dims");
  x = cx.as_layout(x, false);
  const bool in_complex = cx.slot(x).complex;
  const Shape shape = logical(cx.slot(x));
  const std::size_t rank = shape.size();
  a.in_len = shape[axis];
  if (a.n < 1) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": a transform of length " + std::to_string(a.n));
  // The axis last: the other dims in order, then it (then the pair).
  std::vector<std::size_t> perm;
  for (std::size_t d = 0; d < rank; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  Shape lines_shape;
  for (std::size_t d : perm) lines_shape.push_back(shape[d]);
  int moved = x;
  if (axis + 1 != rank) {
    std::vector<std::size_t> full_shape(cx.slot(x).shape.begin(), cx.slot(x).shape.end()), full_perm = perm;
    Shape moved_shape = lines_shape;
    if (in_complex) full_perm.push_back(rank), moved_shape.push_back(2);
    moved = cx.transposed(x, full_shape, full_perm, moved_shape, false);
  }
  Shape rows = lines_shape;
  rows.pop_back();
  Shape in_rows = rows, out_rows = rows;
  in_rows.push_back(a.in_floats());
  out_rows.push_back(a.out_floats());
  const int in = cx.alias(moved, in_rows, false);
  int out;
  if (a.n <= kGemmLength && a.in_len <= kGemmLength) {
    // The operators of axis k, keyed by their matrix's size (the sizes fix the
    // matrix for this node's kind and normalization): another size, another
    // key. 6 + 12 + 12 bits: size_t is 32 bits in wasm.
    static_assert(2 * kGemmLength < (1 << 12));
    const std::size_t key = k << 24 | static_cast<std::size_t>(a.in_floats()) << 12 | static_cast<std::size_t>(a.out_floats());
    for (auto it = st.columns.begin(); it != st.columns.end();)
      it = (it->first >> 24) == k && it->first != key ? st.columns.erase(it) : std::next(it);
    const std::vector<float> w = portable::dft_matrix(a);
    out = fully_connected(cx, n, st, key, in, w.data(), nullptr, a.in_floats(), a.out_floats(), -kInf, kInf);
  } else {
    out = cx.new_tensor(out_rows, false);
    const i64 lines = numel(rows);
    Step& step = cx.add_step({in}, {out});
    step.run = [&cx, a, in, out, lines] {
      cx.parallel_slices(lines, [&](i64 first, i64 count) {
        portable::dft_lines(a, cx.ptr(in) + first * a.in_floats(), cx.ptr(out) + first * a.out_floats(), count);
      });
    };
  }
  const bool out_complex = a.kind != Dft::kC2R;
  Shape result = rows;
  result.push_back(a.out_len);
  if (out_complex) result.push_back(2);
  int y = cx.alias(out, result, false);
  cx.slot(y).complex = out_complex;
  if (axis + 1 == rank) return y;
  // Back in place: the inverse of perm.
  std::vector<std::size_t> back(rank);
  for (std::size_t d = 0; d < rank; ++d) back[perm[d]] = d;
  std::vector<std::size_t> full_shape(result.begin(), result.end()), full_back = back;
  Shape final_shape = shape;
  final_shape[axis] = a.out_len;
  if (out_complex) full_back.push_back(rank), final_shape.push_back(2);
  y = cx.transposed(y, full_shape, full_back, final_shape, false);
  cx.slot(y).complex = out_complex;
  return y;
}

double axis_scale(i64 norm, i64 n) {
  if (norm == kByRootN) return 1.0 / std::sqrt(static_cast<double>(n));
  if (norm == kByN) return 1.0 / static_cast<double>(n);
  return 1.0;
}

// A transform over `axes` (in order; the last is the real one for kR2C and
// kC2R) with signal lengths `lengths`: kR2C and kC2R do their real axis
// first and last respectively, the others complex to complex.
int transform(Context& cx, const Node& n, NodeState& st, int x, Dft kind, const std::vector<std::size_t>& axes,
              const std::vector<i64>& lengths, bool forward, i64 norm, bool onesided) {
  if (axes.empty()) return x;
  std::set<std::size_t> seen(axes.begin(), axes.end());
  if (seen.size() != axes.size()) fail(ErrorCode::kSchema, cx.where(n) + ": a dim given twice");
  const int sign = forward ? -1 : 1;
  std::size_t k = 0;
  auto c2c = [&](int s, std::size_t i) {
    return dft_axis(cx, n, st, k++, s, axes[i], DftAxis{Dft::kC2C, lengths[i], 0, lengths[i], sign, axis_scale(norm, lengths[i])});
  };
  const std::size_t last = axes.size() - 1;
  if (kind == Dft::kR2C) {
    const i64 len = lengths[last];
    x = dft_axis(cx, n, st, k++, x, axes[last], DftAxis{Dft::kR2C, len, 0, onesided ? len / 2 + 1 : len, sign, axis_scale(norm, len)});
    for (std::size_t i = 0; i < last; ++i) x = c2c(x, i);
    return x;
  }
  if (kind == Dft::kC2R) {
    for (std::size_t i = 0; i < last; ++i) x = c2c(x, i);
    const i64 len = lengths[last];
    return dft_axis(cx, n, st, k++, x, axes[last], DftAxis{Dft::kC2R, len, 0, len, sign, axis_scale(norm, len)});
  }
  for (std::size_t i = 0; i < axes.size(); ++i) x = c2c(x, i);
  return x;
}

// A complex slot of real slot x: (x, 0) pairs.
int to_complex(Context& cx, int x) {
  x = cx.as_layout(x, false);
  if (cx.slot(x).complex) return x;
  const Shape shape = cx.slot(x).shape;
  const int out = complex_tensor(cx, shape);
  const i64 count = numel(shape);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, count] {
    const float* a = cx.ptr(x);
    float* y = cx.ptr(out);
    for (i64 i = 0; i < count; ++i) y[2 * i] = a[i], y[2 * i + 1] = 0.0f;
  };
  return out;
}

std::vector<std::size_t> axes_of(const Context& cx, const Node& n, const std::vector<i64>& dims, std::size_t rank) {
  std::vector<std::size_t> axes;
  for (i64 d : dims) axes.push_back(axis_of(cx, n, d, rank));
  return axes;
}

// torch.fft's `norm` string as the normalization of a forward or inverse transform.
i64 norm_named(const Context& cx, const Node& n, bool forward) {
  const std::string norm = n.attributes.get_string("norm").value_or("backward");
  if (norm == "backward") return forward ? kNone : kByN;
  if (norm == "ortho") return kByRootN;
  if (norm == "forward") return forward ? kByN : kNone;
  fail(ErrorCode::kSchema, cx.where(n) + ": norm '" + norm + "'");
}

// torch.fft's fft/ifft/rfft/irfft (`n`, `dim`), their 2 and n forms (`s`,
// `dim`), as TorchScript writes them: the dims, and each one's signal
// length (the input's size, or s's; for irfft's last, 2 * (size - 1)).
void fft_dims(const Context& cx, const Node& n, const Shape& shape, bool c2r, std::vector<std::size_t>& axes, std::vector<i64>& lengths) {
  const std::string base = base_op(n.op);
  const bool one = base.back() == 't';  // fft_fft, fft_rfft, ... (not fft_fft2, fft_fftn)
  const bool two = base.back() == '2';
  std::optional<std::vector<i64>> s, dim;
  if (one) {
    if (auto len = cx.int_arg(n, "n")) s = std::vector<i64>{*len};
    dim = std::vector<i64>{cx.int_arg(n, "dim").value_or(-1)};
  } else {
    s = cx.ints_arg(n, "s");
    dim = cx.ints_arg(n, "dim");
    if (!dim && two) dim = std::vector<i64>{-2, -1};
  }
  const std::size_t rank = shape.size();
  if (!dim) {  // every dim, or the last len(s)
    const std::size_t count = s ? s->size() : rank;
    if (count > rank) fail(ErrorCode::kSchema, cx.where(n) + ": 's' has more entries than the input has dims");
    dim.emplace();
    for (std::size_t d = rank - count; d < rank; ++d) dim->push_back(static_cast<i64>(d));
  }
  if (s && s->size() != dim->size()) fail(ErrorCode::kSchema, cx.where(n) + ": 's' and 'dim' differ in length");
  axes = axes_of(cx, n, *dim, rank);
  lengths.clear();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    i64 len = s && (*s)[i] != -1 ? (*s)[i] : shape[axes[i]];
    if (c2r && i + 1 == axes.size() && !(s && (*s)[i] != -1)) len = 2 * (shape[axes[i]] - 1);
    lengths.push_back(len);
  }
}

}  // namespace

bool takes_complex(std::string_view base) {
  static const std::set<std::string_view> kOps = {
      "_fft_r2c", "_fft_c2r", "_fft_c2c", "fft_fft", "fft_ifft", "fft_rfft", "fft_irfft", "fft_fft2", "fft_ifft2", "fft_rfft2",
      "fft_irfft2", "fft_fftn", "fft_ifftn", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft", "view_as_real", "view_as_complex", "real", "imag",
      "complex", "_conj", "conj", "conj_physical", "resolve_conj", "mul", "mul_", "add", "add_", "sub", "sub_", "div", "div_",
      "_to_copy", "to", "clone", "contiguous", "detach", "alias", "lift_fresh_copy", "alias_copy", "detach_copy", "dropout", "einsum", "bmm", "mm", "matmul", "abs", "stft"};
  return kOps.count(base) > 0;
}

const std::string kComplexOps =
    "complex tensors go only to the FFTs, view_as_real, view_as_complex, real, imag, abs, complex, conj, add, sub, mul, div, einsum, matmul, "
    "casts and the layout ops (view, reshape, flatten, permute, transpose, squeeze, unsqueeze, select, slice, narrow, cat, stack, split, "
    "unbind, expand, flip, copy, slice_scatter, select_scatter) here";

void lower_fft(Context& cx, const Node& n, NodeState& st) {
  const std::string base = base_op(n.op);
  int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = logical(cx.slot(x));
  if (base == "_fft_r2c" || base == "_fft_c2r" || base == "_fft_c2c") {
    const std::vector<std::size_t> axes = axes_of(cx, n, cx.ints_arg(n, "dim").value_or(std::vector<i64>{}), shape.size());
    const i64 norm = cx.int_arg(n, "normalization").value_or(kNone);
    std::vector<i64> lengths;
    for (std::size_t axis : axes) lengths.push_back(shape[axis]);
    if (base == "_fft_r2c") {
      if (cx.slot(x).complex) fail(ErrorCode::kSchema, cx.where(n) + ": the input is complex");
      return cx.define(n.outputs[0], transform(cx, n, st, x, Dft::kR2C, axes, lengths, true, norm, cx.int_arg(n, "onesided").value_or(1) != 0));
    }
    if (!cx.slot(x).complex) x = to_complex(cx, x);
    if (base == "_fft_c2c") return cx.define(n.outputs[0], transform(cx, n, st, x, Dft::kC2C, axes, lengths, cx.int_arg(n, "forward").value_or(1) != 0, norm, false));
    if (!axes.empty()) lengths.back() = cx.int_arg(n, "last_dim_size").value_or(2 * (shape[axes.back()] - 1));
    return cx.define(n.outputs[0], transform(cx, n, st, x, Dft::kC2R, axes, lengths, false, norm, false));
  }
  // torch.fft's own spellings (TorchScript and torch.export keep them). hfft
  // is a forward transform to real values, ihfft an inverse one from them.
  const bool inverse = base.rfind("fft_i", 0) == 0;
  const bool real_in = base.rfind("fft_rfft", 0) == 0 || base.rfind("fft_ihfft", 0) == 0;
  const bool real_out = base.rfind("fft_irfft", 0) == 0 || base.rfind("fft_hfft", 0) == 0;
  std::vector<std::size_t> axes;
  std::vector<i64> lengths;
  fft_dims(cx, n, shape, real_out, axes, lengths);
  const i64 norm = norm_named(cx, n, !inverse);
  if (real_in) {
    if (cx.slot(x).complex) fail(ErrorCode::kSchema, cx.where(n) + ": " + base + " of a complex input");
    return cx.define(n.outputs[0], transform(cx, n, st, x, Dft::kR2C, axes, lengths, !inverse, norm, true));
  }
  if (real_out) {
    if (!cx.slot(x).complex) x = to_complex(cx, x);
    return cx.define(n.outputs[0], transform(cx, n, st, x, Dft::kC2R, axes, lengths, !inverse, norm, false));
  }
  // fft/ifft (2, n): a real input's first transform is a full real-to-complex one.
  if (!cx.slot(x).complex && !axes.empty()) {
    const std::size_t last = axes.size() - 1;
    x = dft_axis(cx, n, st, 63, x, axes[last], DftAxis{Dft::kR2C, lengths[last], 0, lengths[last], inverse ? 1 : -1, axis_scale(norm, lengths[last])});
    axes.pop_back();
    lengths.pop_back();
  }
  if (!cx.slot(x).complex) x = to_complex(cx, x);
  cx.define(n.outputs[0], transform(cx, n, st, x, Dft::kC2C, axes, lengths, !inverse, norm, false));
}

void lower_complex(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  if (base == "complex") {  // complex(real, imag): broadcast, then paired
    const int re = cx.as_layout(cx.tensor_arg(n, "real", 0), false), im = cx.as_layout(cx.tensor_arg(n, "imag", 1), false);
    if (cx.slot(re).complex || cx.slot(im).complex) fail(ErrorCode::kSchema, cx.where(n) + ": a complex part");
    const Shape shape = broadcast_shape(cx, n, cx.slot(re).shape, cx.slot(im).shape);
    const int a = broadcast_to(cx, re, shape), b = broadcast_to(cx, im, shape);
    const int out = complex_tensor(cx, shape);
    const i64 count = numel(shape);
    Step& step = cx.add_step({a, b}, {out});
    step.run = [&cx, a, b, out, count] {
      const float *p = cx.ptr(a), *q = cx.ptr(b);
      float* y = cx.ptr(out);
      for (i64 i = 0; i < count; ++i) y[2 * i] = p[i], y[2 * i + 1] = q[i];
    };
    return cx.define(n.outputs[0], out);
  }
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Slot s = cx.slot(x);  // a copy: new slots may move the slots
  if (base == "view_as_complex") {
    if (s.complex || s.shape.empty() || s.shape.back() != 2)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": view_as_complex takes a real tensor whose last dim is 2, given " + shape_str(s.shape));
    const int y = cx.alias(x, s.shape, false);
    cx.slot(y).complex = true;
    return cx.define(n.outputs[0], y);
  }
  if (!s.complex) {
    // real(x) of a real tensor is x; imag(x) and view_as_real refuse it, as torch does.
    if (base == "real" || base == "resolve_conj" || base == "conj" || base == "_conj" || base == "conj_physical")
      return cx.define(n.outputs[0], x);
    fail(ErrorCode::kDTypeMismatch, cx.where(n) + ": " + base + " takes a complex tensor");
  }
  if (base == "view_as_real") {
    const int y = cx.alias(x, s.shape, false);
    cx.slot(y).complex = false;
    return cx.define(n.outputs[0], y);
  }
  if (base == "resolve_conj") return cx.define(n.outputs[0], x);
  const Shape shape = s.shape;
  const i64 count = numel(shape) / 2;
  if (base == "real" || base == "imag") return cx.define(n.outputs[0], complex_part(cx, x, base == "imag" ? 1 : 0));
  // conj, _conj, conj_physical: the imaginary parts negated.
  const int out = complex_tensor(cx, logical(s));
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, count] {
    const float* a = cx.ptr(x);
    float* y = cx.ptr(out);
    for (i64 i = 0; i < count; ++i) y[2 * i] = a[2 * i], y[2 * i + 1] = -a[2 * i + 1];
  };
  cx.define(n.outputs[0], out);
}

bool lower_complex_binary(Context& cx, const Node& n, const std::string& base) {
  auto a = input_for_arg(n, "self", 0), b = input_for_arg(n, "other", 1);
  if (!a) return false;
  const bool a_complex = cx.slot_of(*a).complex, b_complex = b && cx.slot_of(*b).complex;
  if (!a_complex && !b_complex) return false;
  if (base != "add" && base != "sub" && base != "mul" && base != "div")
    fail(ErrorCode::kUnsupported, cx.where(n) + ": " + base + " of complex tensors");
  const double alpha = cx.float_arg(n, "alpha").value_or(1.0) * (base == "sub" ? -1.0 : 1.0);
  if (n.attributes.get_string("rounding_mode")) fail(ErrorCode::kUnsupported, cx.where(n) + ": a rounded division of complex tensors");
  // Each operand: complex pairs, a real tensor or a number, broadcast to the output's shape.
  struct Operand {
    int slot = -1;
    bool complex = false;
    float number = 0;
  };
  Shape shape;
  bool first = true;
  for (const auto& v : {a, b}) {
    if (!v || cx.slot_of(*v).kind != Kind::kTensor) continue;
    const Shape l = logical(cx.slot_of(*v));
    shape = first ? l : broadcast_shape(cx, n, shape, l);
    first = false;
  }
  auto operand = [&](const std::optional<ValueId>& in) {
    Operand o;
    if (!in) {  // a number attribute (mul.Scalar's other)
      o.number = static_cast<float>(number_arg(cx, n, "other"));
      return o;
    }
    const ValueId v = *in;
    const Slot& s = cx.slot_of(v);
    if (s.kind == Kind::kInt || s.kind == Kind::kFloat) {
      o.number = static_cast<float>(s.kind == Kind::kInt ? static_cast<double>(s.i) : s.f);
      return o;
    }
    o.complex = s.complex;
    Shape to = shape;
    if (o.complex) to.push_back(2);
    o.slot = broadcast_to(cx, cx.held_tensor_slot(n, v), to);
    return o;
  };
  const Operand p = operand(a), q = operand(b);
  // In place (add_, mul_): into self's pairs, where they have the output's shape.
  const bool inplace = op_base(n.op).back() == '_';
  const Slot& self = cx.slot_of(*a);
  const bool into_self = inplace && a_complex && !self.constant && logical(self) == shape;
  const int out = into_self ? cx.slot_index(*a) : complex_tensor(cx, shape);
  const i64 count = numel(shape);
  std::vector<int> reads;
  for (const Operand& o : {p, q})
    if (o.slot >= 0) reads.push_back(o.slot);
  Step& step = cx.add_step(reads, {out});
  const char op = base == "mul" ? '*' : base == "div" ? '/' : '+';
  const auto scale = static_cast<float>(alpha);
  step.run = [&cx, p, q, out, count, op, scale] {
    auto at = [&cx](const Operand& o, i64 i, float& re, float& im) {
      if (o.slot < 0) re = o.number, im = 0;
      else if (o.complex) re = cx.ptr(o.slot)[2 * i], im = cx.ptr(o.slot)[2 * i + 1];
      else re = cx.ptr(o.slot)[i], im = 0;
    };
    float* y = cx.ptr(out);
    for (i64 i = 0; i < count; ++i) {
      float ar, ai, br, bi;
      at(p, i, ar, ai);
      at(q, i, br, bi);
      if (op == '*') {
        y[2 * i] = ar * br - ai * bi, y[2 * i + 1] = ar * bi + ai * br;
      } else if (op == '/') {
        const float d = br * br + bi * bi;
        y[2 * i] = (ar * br + ai * bi) / d, y[2 * i + 1] = (ai * br - ar * bi) / d;
      } else {
        y[2 * i] = ar + scale * br, y[2 * i + 1] = ai + scale * bi;
      }
    }
  };
  cx.define(n.outputs[0], out);
  return true;
}

void lower_stft(Context& cx, const Node& n, NodeState& st) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  if (cx.slot(x).complex) fail(ErrorCode::kUnsupported, cx.where(n) + ": stft of a complex signal (real signals here)");
  const Shape xs = cx.slot(x).shape;
  if (xs.size() != 1 && xs.size() != 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": stft of a signal of shape " + shape_str(xs) + " (1-D or 2-D, as torch)");
  const i64 n_fft = cx.int_arg(n, "n_fft").value_or(0);
  const i64 hop = cx.int_arg(n, "hop_length").value_or(n_fft / 4);
  const i64 win = cx.int_arg(n, "win_length").value_or(n_fft);
  const bool center = cx.int_arg(n, "center").value_or(0) != 0;
  const std::string pad_mode = n.attributes.get_string("pad_mode").value_or("reflect");
  if (cx.int_arg(n, "align_to_window").value_or(0) != 0) fail(ErrorCode::kUnsupported, cx.where(n) + ": stft with align_to_window");
  if (pad_mode != "reflect" && pad_mode != "constant") fail(ErrorCode::kUnsupported, cx.where(n) + ": stft with pad_mode '" + pad_mode + "' (reflect or constant here)");
  const i64 length = xs.back(), pad = center ? n_fft / 2 : 0, padded = length + 2 * pad;
  if (n_fft < 1 || hop < 1 || win < 1 || win > n_fft || n_fft > padded || n_fft > (i64{1} << 24) || (center && pad_mode == "reflect" && pad >= length))
    fail(ErrorCode::kInvalidArgument, cx.where(n) + ": stft with n_fft " + std::to_string(n_fft) + ", hop_length " + std::to_string(hop) + ", win_length " +
                                          std::to_string(win) + " of a signal of length " + std::to_string(length));
  // The window, zero-padded to n_fft in the middle (ones when none is given).
  std::vector<float> window(static_cast<std::size_t>(n_fft), 0.0f);
  const i64 left = (n_fft - win) / 2;
  int w = -1;
  if (auto v = input_for_arg(n, "window", 4); v && cx.slot_of(*v).kind == Kind::kTensor) {
    w = cx.as_layout(cx.slot_index(*v), false);
    if (cx.slot(w).complex || cx.slot(w).shape != Shape{win})
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": a window of shape " + shape_str(cx.slot(w).shape) + " for win_length " + std::to_string(win));
  } else {
    std::fill(window.begin() + left, window.begin() + left + win, 1.0f);
  }
  const i64 batch = xs.size() == 2 ? xs[0] : 1, frames = 1 + (padded - n_fft) / hop;
  // The frames [batch, frames, n_fft], windowed, then one real-to-complex transform along them.
  const int framed = cx.new_tensor({batch, frames, n_fft}, false);
  std::vector<int> reads{x};
  if (w >= 0) reads.push_back(w);
  Step& step = cx.add_step(reads, {framed});
  step.run = [&cx, x, w, framed, window, batch, frames, n_fft, hop, win, left, length, pad, reflect = pad_mode == "reflect"] {
    const float* a = cx.ptr(x);
    const float* given = w >= 0 ? cx.ptr(w) : nullptr;
    float* y = cx.ptr(framed);
    for (i64 b = 0; b < batch; ++b)
      for (i64 t = 0; t < frames; ++t)
        for (i64 k = 0; k < n_fft; ++k) {
          const float wk = given ? (k >= left && k < left + win ? given[k - left] : 0.0f) : window[static_cast<std::size_t>(k)];
          i64 i = t * hop + k - pad;  // in the signal; outside it, reflected or zero
          float v = 0.0f;
          if (i < 0 && reflect) i = -i;
          if (i >= length && reflect) i = 2 * (length - 1) - i;
          if (i >= 0 && i < length) v = a[b * length + i];
          y[(b * frames + t) * n_fft + k] = v * wk;
        }
  };
  const bool onesided = cx.int_arg(n, "onesided").value_or(1) != 0;
  const double scale = cx.int_arg(n, "normalized").value_or(0) != 0 ? 1.0 / std::sqrt(static_cast<double>(n_fft)) : 1.0;
  const int spectrum = onesided ? dft_axis(cx, n, st, 0, framed, 2, DftAxis{Dft::kR2C, n_fft, 0, n_fft / 2 + 1, -1, scale})
                                : dft_axis(cx, n, st, 0, to_complex(cx, framed), 2, DftAxis{Dft::kC2C, n_fft, 0, n_fft, -1, scale});
  // [batch, frames, bins, 2] to torch's [batch, bins, frames, 2] (no batch for a 1-D signal).
  const i64 bins = onesided ? n_fft / 2 + 1 : n_fft;
  Shape out_shape = xs.size() == 2 ? Shape{batch, bins, frames, 2} : Shape{bins, frames, 2};
  const int y = cx.transposed(spectrum, {static_cast<std::size_t>(batch), static_cast<std::size_t>(frames), static_cast<std::size_t>(bins), 2}, {0, 2, 1, 3},
                              out_shape, false);
  const bool complex_out = cx.int_arg(n, "return_complex").value_or(1) != 0;  // else view_as_real's pairs (torch's deprecated form)
  cx.slot(y).complex = complex_out;
  cx.define(n.outputs[0], y);
}

// The window functions (hann_window, hamming_window, ...): planned constants, torch's formulas.
void lower_window(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const i64 length = cx.int_arg(n, "window_length").value_or(-1);
  if (length < 0 || length > (i64{1} << 24)) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": a window of length " + std::to_string(length));
  const bool periodic = cx.int_arg(n, "periodic").value_or(1) != 0;
  const double alpha = cx.float_arg(n, "alpha").value_or(0.54), beta = cx.float_arg(n, "beta").value_or(0.46);
  std::vector<float> w(static_cast<std::size_t>(length), 1.0f);
  const double span = static_cast<double>(periodic ? length : length - 1);
  const double pi = 3.14159265358979323846;
  for (i64 k = 0; length > 1 && k < length; ++k) {
    const double phase = 2 * pi * static_cast<double>(k) / span;
    double v = 0;
    if (base == "hann_window") v = 0.5 - 0.5 * std::cos(phase);
    else if (base == "hamming_window") v = alpha - beta * std::cos(phase);
    else if (base == "blackman_window") v = 0.42 - 0.5 * std::cos(phase) + 0.08 * std::cos(2 * phase);
    else v = 1.0 - std::fabs(2.0 * static_cast<double>(k) / span - 1.0);  // bartlett_window
    w[static_cast<std::size_t>(k)] = static_cast<float>(v);
  }
  cx.define(n.outputs[0], cx.planned_constant({length}, std::move(w)));
}

bool layout_op_on_pairs(std::string_view base) {
  static const std::set<std::string_view> kOps = {
      "view", "reshape", "_unsafe_view", "flatten", "unflatten", "permute", "transpose", "unsqueeze", "squeeze", "select",
      "slice", "narrow", "cat", "concat", "stack", "chunk", "split", "split_with_sizes", "unbind", "expand", "flip", "copy",
      "slice_scatter", "select_scatter"};
  return kOps.count(base) > 0;
}

void lower_layout_on_pairs(Context& cx, const Node& n, NodeState& st, Lowering lower) {
  const std::string base = base_op(n.op);
  // Every tensor input of one kind, complex or int64 (cat of a complex and a
  // real tensor is not a layout change).
  std::size_t rank = 0;
  std::optional<bool> ints;
  for (ValueId v : n.inputs) {
    const Slot& s = cx.slot_of(v);
    if (s.kind != Kind::kTensor) continue;
    if (!s.complex && !s.int64) fail(ErrorCode::kUnsupported, cx.where(n) + ": input '" + cx.graph().value(v).name + "' is real beside a complex one");
    if (ints && *ints != s.int64) fail(ErrorCode::kUnsupported, cx.where(n) + ": input '" + cx.graph().value(v).name + "' is complex beside an int64 one");
    if (!ints) rank = s.shape.size() - 1, ints = s.int64;
  }
  // The arguments for the pairs' rank: a negative dim one further from the
  // end, permute's dims with the pair dim last, a shape with the pair dim.
  const auto dim = [](i64 d) { return d < 0 ? d - 1 : d; };
  std::map<std::string, std::function<std::vector<i64>(std::vector<i64>)>> adjust;
  for (const char* name : {"dim", "dim0", "dim1", "start_dim", "end_dim"})
    adjust[name] = [dim](std::vector<i64> v) {
      for (i64& d : v) d = dim(d);
      return v;
    };
  if (base == "permute") {
    adjust["dims"] = [rank](std::vector<i64> v) {
      for (i64& d : v) d = d < 0 ? d + static_cast<i64>(rank) : d;
      v.push_back(static_cast<i64>(rank));
      return v;
    };
  } else if (base == "flip") {
    adjust["dims"] = adjust["dim"];
  }
  if (base == "view" || base == "reshape" || base == "_unsafe_view" || base == "expand") {
    for (const char* name : {"size", "shape"})
      adjust[name] = [](std::vector<i64> v) {
        v.push_back(2);
        return v;
      };
  }
  Node m = n;
  // flatten's end_dim defaults to the last dim: the logical one, before the pairs.
  if (base == "flatten" && !n.attributes.contains("end_dim") && !input_for_arg(n, "end_dim", std::numeric_limits<std::size_t>::max()))
    m.attributes.set("end_dim", std::int64_t{-2});
  // Arguments given as inputs (sizes computed in the graph): their slots
  // stand in for them while this node plans, then the graph's again.
  std::vector<std::pair<ValueId, int>> restore;
  for (const auto& [name, f] : adjust) {
    if (const AttributeValue* a = n.attributes.find(name)) {
      if (auto i = std::get_if<std::int64_t>(a)) m.attributes.set(name, f({*i})[0]);
      else if (auto l = std::get_if<std::vector<std::int64_t>>(a)) m.attributes.set(name, f(*l));
      continue;
    }
    auto v = input_for_arg(n, name, std::numeric_limits<std::size_t>::max());
    if (!v || std::any_of(restore.begin(), restore.end(), [&](const auto& r) { return r.first == *v; })) continue;
    const int old = cx.slot_index(*v);
    const Slot known = cx.slot(old);
    if (known.kind == Kind::kInt) restore.emplace_back(*v, old), cx.define(*v, cx.int_slot(f({known.i})[0]));
    else if (known.kind == Kind::kInts) restore.emplace_back(*v, old), cx.define(*v, cx.ints_slot(f(known.ints)));
  }
  try {
    lower(cx, m, st);
  } catch (...) {
    for (const auto& [v, old] : restore) cx.define(v, old);
    throw;
  }
  for (const auto& [v, old] : restore) cx.define(v, old);
  for (ValueId o : n.outputs) {
    if (!cx.defined(o)) continue;
    const int s = cx.slot_index(o);
    if (cx.slot(s).kind != Kind::kTensor) continue;
    if (cx.slot(s).shape.empty() || cx.slot(s).shape.back() != 2)
      fail(ErrorCode::kInternal, cx.where(n) + ": " + base + " of pairs lost them (" + shape_str(cx.slot(s).shape) + ")");
    cx.slot(s).complex = !ints.value_or(false);
    cx.slot(s).int64 = ints.value_or(false);
  }
}

int complex_abs(Context& cx, int x) {
  const i64 count = numel(cx.slot(x).shape) / 2;  // before new_tensor(), which may move the slots
  const int out = cx.new_tensor(logical(cx.slot(x)), false);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, count] {
    const float* a = cx.ptr(x);
    float* y = cx.ptr(out);
    for (i64 i = 0; i < count; ++i) y[i] = static_cast<float>(std::hypot(static_cast<double>(a[2 * i]), static_cast<double>(a[2 * i + 1])));
  };
  return out;
}

int complex_cast(Context& cx, const Node&, int x, bool to_complex_type) {
  x = cx.as_layout(x, false);
  if (to_complex_type) return to_complex(cx, x);
  return complex_part(cx, x, 0);  // a complex tensor cast to a real type keeps the real parts (torch warns)
}

}  // namespace tracegraph::xnnpack
