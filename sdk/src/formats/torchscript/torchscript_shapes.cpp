#include "formats/torchscript/torchscript_shapes.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <string_view>

#include "tracegraph/op_table.h"
#include "tracegraph/shape_rules.h"

namespace tracegraph::detail {
namespace {

// A node's arguments by their schema names: attributes, or inputs named in arg_names.
class Args {
 public:
  Args(const Node& n, const KnownOf& known) : n_(n), known_(known) {
    if (const auto* names = n.attributes.find(kArgNamesAttribute)) {
      if (const auto* v = std::get_if<std::vector<std::string>>(names)) names_ = *v;
    }
  }
  // The tensor inputs named `name` (several for a Tensor[]).
  std::vector<ValueId> inputs(std::string_view name) const {
    std::vector<ValueId> out;
    for (std::size_t i = 0; i < names_.size() && i < n_.inputs.size(); ++i) {
      if (names_[i] == name) out.push_back(n_.inputs[i]);
    }
    return out;
  }
  std::optional<Shape> shape(std::string_view name) const {
    const auto in = inputs(name);
    if (in.size() != 1) return std::nullopt;
    return known_(in[0]).shape;
  }
  bool given(std::string_view name) const { return n_.attributes.contains(name) || !inputs(name).empty(); }
  // An int or int[] argument, as an attribute or a value the reader knows the numbers of.
  std::optional<std::vector<std::int64_t>> ints(std::string_view name) const {
    if (const AttributeValue* a = n_.attributes.find(name)) {
      if (const auto* i = std::get_if<std::int64_t>(a)) return std::vector<std::int64_t>{*i};
      if (const auto* v = std::get_if<std::vector<std::int64_t>>(a)) return *v;
      if (const auto* b = std::get_if<bool>(a)) return std::vector<std::int64_t>{*b};
      return std::nullopt;
    }
    const auto in = inputs(name);
    if (in.size() != 1) return std::nullopt;
    return known_(in[0]).ints;
  }
  std::optional<std::int64_t> int_(std::string_view name) const {
    const auto v = ints(name);
    if (!v || v->size() != 1) return std::nullopt;
    return (*v)[0];
  }
  std::int64_t int_or(std::string_view name, std::int64_t fallback) const {
    if (!given(name)) return fallback;
    return int_(name).value_or(fallback);
  }
  std::optional<std::vector<double>> floats(std::string_view name) const {
    const AttributeValue* a = n_.attributes.find(name);
    if (!a) return std::nullopt;
    if (const auto* v = std::get_if<std::vector<double>>(a)) return *v;
    if (const auto* d = std::get_if<double>(a)) return std::vector<double>{*d};
    return std::nullopt;
  }
  bool flag(std::string_view name) const { return n_.attributes.get_bool(name).value_or(false); }
  std::optional<std::string> string(std::string_view name) const {
    const AttributeValue* a = n_.attributes.find(name);
    if (!a) return std::nullopt;
    if (const auto* s = std::get_if<std::string>(a)) return *s;
    return std::nullopt;
  }
  // A second operand that is a tensor or a number (attribute).
  std::optional<Shape> operand(std::string_view name) const {
    if (!inputs(name).empty()) return shape(name);
    return Shape{};
  }

 private:
  const Node& n_;
  const KnownOf& known_;
  std::vector<std::string> names_;
};

// A dim counted from the end when negative; nullopt outside [0, rank).
std::optional<std::size_t> wrap(std::int64_t dim, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (dim < 0) dim += r;
  if (dim < 0 || dim >= r) return std::nullopt;
  return static_cast<std::size_t>(dim);
}

// An int[] of one element or `n`, as the spatial dims of a window op want it.
std::optional<std::vector<std::int64_t>> spread(std::optional<std::vector<std::int64_t>> v, std::size_t n) {
  if (!v) return std::nullopt;
  if (v->size() == 1) return std::vector<std::int64_t>(n, (*v)[0]);
  if (v->size() != n) return std::nullopt;
  return v;
}

// conv1d/2d/3d, convolution, _convolution and their transposed forms: input [N, C, *] or [C, *].
std::optional<Shape> convolution(const Args& a, bool transposed) {
  const auto x = a.shape("input"), w = a.shape("weight");
  if (!x || !w || w->size() < 3 || x->size() + 1 < w->size()) return std::nullopt;
  const std::size_t spatial = w->size() - 2, lead = x->size() - spatial;
  const auto stride = spread(a.given("stride") ? a.ints("stride") : std::vector<std::int64_t>{1}, spatial);
  const auto dilation = spread(a.given("dilation") ? a.ints("dilation") : std::vector<std::int64_t>{1}, spatial);
  const auto out_pad = spread(a.given("output_padding") ? a.ints("output_padding") : std::vector<std::int64_t>{0}, spatial);
  const std::int64_t groups = a.int_or("groups", 1);
  const auto mode = a.string("padding");
  const auto padding = mode ? std::optional<std::vector<std::int64_t>>(std::vector<std::int64_t>(spatial, 0))
                            : spread(a.given("padding") ? a.ints("padding") : std::vector<std::int64_t>{0}, spatial);
  if (!stride || !dilation || !padding || !out_pad || groups <= 0) return std::nullopt;
  Shape out(x->begin(), x->begin() + static_cast<std::ptrdiff_t>(lead));
  out.back() = transposed ? (*w)[1] * groups : (*w)[0];
  for (std::size_t d = 0; d < spatial; ++d) {
    const std::int64_t in = (*x)[lead + d], k = (*w)[2 + d];
    if (transposed) {
      const std::int64_t o = shape_rules::transposed_output(in, k, (*stride)[d], (*padding)[d], (*dilation)[d], (*out_pad)[d]);
      if (o <= 0) return std::nullopt;
      out.push_back(o);
    } else if (mode == "same") {
      out.push_back(in);
    } else {
      const auto o = shape_rules::window_output(in, k, (*stride)[d], (*padding)[d], (*dilation)[d]);
      if (!o) return std::nullopt;
      out.push_back(*o);
    }
  }
  return out;
}

// max/avg pooling over the last `spatial` dims.
std::optional<Shape> pooling(const Args& a, std::size_t spatial) {
  const auto x = a.shape("self");
  if (!x || x->size() < spatial + 1) return std::nullopt;
  const auto kernel = spread(a.ints("kernel_size"), spatial);
  auto stride = a.ints("stride");
  if (!stride || stride->empty()) stride = kernel;
  stride = spread(stride, spatial);
  const auto padding = spread(a.given("padding") ? a.ints("padding") : std::vector<std::int64_t>{0}, spatial);
  const auto dilation = spread(a.given("dilation") ? a.ints("dilation") : std::vector<std::int64_t>{1}, spatial);
  if (!kernel || !stride || !padding || !dilation) return std::nullopt;
  Shape out = *x;
  for (std::size_t d = 0; d < spatial; ++d) {
    const std::size_t i = x->size() - spatial + d;
    const auto o = shape_rules::window_output((*x)[i], (*kernel)[d], (*stride)[d], (*padding)[d], (*dilation)[d], a.flag("ceil_mode"));
    if (!o) return std::nullopt;
    out[i] = *o;
  }
  return out;
}

// upsample_*: output_size, or the input's sizes times scale_factors (floored), over the last `spatial` dims.
std::optional<Shape> resize(const Args& a, std::size_t spatial) {
  const auto x = a.shape("input").has_value() ? a.shape("input") : a.shape("self");
  if (!x || x->size() < spatial) return std::nullopt;
  Shape out = *x;
  if (const auto size = a.ints("output_size"); size && !size->empty()) {
    if (size->size() != spatial) return std::nullopt;
    std::copy(size->begin(), size->end(), out.end() - static_cast<std::ptrdiff_t>(spatial));
    return out;
  }
  const auto scales = a.floats("scale_factors");
  if (!scales || scales->size() != spatial) return std::nullopt;
  for (std::size_t d = 0; d < spatial; ++d) {
    const std::size_t i = x->size() - spatial + d;
    out[i] = static_cast<std::int64_t>(std::floor(static_cast<double>((*x)[i]) * (*scales)[d]));
  }
  return out;
}

std::optional<Shape> reduce(const Args& a, const Shape& x) {
  auto dims = a.ints("dim");
  const bool keep = a.flag("keepdim");
  std::vector<bool> reduced(x.size(), !dims || dims->empty());
  if (dims) {
    for (std::int64_t d : *dims) {
      const auto i = wrap(d, x.size());
      if (!i) return std::nullopt;
      reduced[*i] = true;
    }
  }
  Shape out;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!reduced[i]) out.push_back(x[i]);
    else if (keep) out.push_back(1);
  }
  return out;
}

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Ops whose output has their first input's shape.
const std::set<std::string, std::less<>>& same_shape_ops() {
  static const std::set<std::string, std::less<>> kOps = {
      "relu", "relu6", "sigmoid", "tanh", "gelu", "silu", "elu", "selu", "celu", "leaky_relu", "hardswish", "hardsigmoid",
      "hardtanh", "mish", "softplus", "softsign", "prelu", "clamp", "clamp_min", "clamp_max", "dropout", "feature_dropout",
      "alpha_dropout", "feature_alpha_dropout", "contiguous", "clone", "detach", "softmax", "log_softmax", "batch_norm",
      "instance_norm", "group_norm", "layer_norm", "neg", "exp", "log", "sqrt", "rsqrt", "abs", "erf", "sin", "cos",
      "reciprocal", "sign", "floor", "ceil", "round", "to", "type_as", "_to_copy", "bernoulli", "zeros_like", "ones_like",
      "empty_like", "full_like", "rand_like", "randn_like", "logical_not", "bitwise_not", "square", "exp2", "log1p",
      "expm1", "log2", "log10", "trunc", "frac", "cumsum", "cumprod", "nan_to_num", "channel_shuffle", "pixel_unshuffle_",
      // writes into self (in place, or made functional): self's shape
      "slice_scatter", "select_scatter", "diagonal_scatter", "index_put", "index_copy", "index_fill", "index_add",
      "masked_fill", "masked_scatter", "scatter", "scatter_add", "scatter_reduce", "copy", "fill", "zero"};
  return kOps;
}
// The upsample_* ops resize() reads, each over the spatial rank its name gives.
const std::set<std::string, std::less<>>& resize_ops() {
  static const std::set<std::string, std::less<>> kOps = {
      "upsample_nearest1d", "upsample_linear1d", "_upsample_nearest_exact1d", "upsample_nearest2d", "upsample_bilinear2d",
      "upsample_bicubic2d", "_upsample_nearest_exact2d", "_upsample_bilinear2d_aa", "upsample_nearest3d", "upsample_trilinear3d",
      "_upsample_nearest_exact3d"};
  return kOps;
}
const std::set<std::string, std::less<>>& broadcast_ops() {
  static const std::set<std::string, std::less<>> kOps = {
      "add", "sub", "rsub", "mul", "div", "pow", "maximum", "minimum", "fmod", "remainder", "floor_divide", "eq", "ne",
      "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "atan2", "true_divide"};
  return kOps;
}

}  // namespace

std::optional<Shape> infer_shape(const Node& node, std::size_t output, const KnownOf& known) {
  // A number as a 0-dim tensor: what a traced shape computation makes of x.size(2).
  if (node.op == "prim::NumToTensor") return output == 0 ? std::optional<Shape>(Shape{}) : std::nullopt;
  if (node.op.rfind("aten::", 0) != 0) return std::nullopt;
  std::string op = node.op.substr(6);
  if (op.size() > 1 && op.back() == '_' && op.rfind("__", 0) != 0) op.pop_back();  // relu_ is relu's shape
  const Args a(node, known);
  const auto self = a.shape("self").has_value() ? a.shape("self") : a.shape("input");
  if (same_shape_ops().count(op)) return output == 0 ? self : std::nullopt;
  if (output != 0 && op != "chunk" && op != "split" && op != "unbind") return std::nullopt;
  if (broadcast_ops().count(op)) {
    const auto other = a.operand("other");
    if (!self || !other) return std::nullopt;
    return shape_rules::broadcast(*self, *other);
  }
  if (op == "where") {
    const auto c = a.shape("condition"), x = a.operand("self"), y = a.operand("other");
    if (!c || !x || !y) return std::nullopt;
    const auto xy = shape_rules::broadcast(*x, *y);
    return xy ? shape_rules::broadcast(*c, *xy) : std::nullopt;
  }
  if (op == "conv1d" || op == "conv2d" || op == "conv3d") return convolution(a, false);
  if (op == "conv_transpose1d" || op == "conv_transpose2d" || op == "conv_transpose3d") return convolution(a, true);
  if (op == "convolution" || op == "_convolution") return convolution(a, a.flag("transposed"));
  if (const std::optional<std::size_t> rank = named_spatial_rank(op)) {
    const std::size_t d = *rank;
    const std::string n = std::to_string(d) + "d";  // as the names below spell it
    if (op == "max_pool" + n || op == "avg_pool" + n) return pooling(a, d);
    if (resize_ops().count(op)) return resize(a, d);
    if (op == "adaptive_avg_pool" + n || op == "adaptive_max_pool" + n || op == "_adaptive_avg_pool" + n) {
      const auto size = spread(a.ints("output_size"), d);
      if (!self || !size || self->size() < d) return std::nullopt;
      Shape out = *self;
      std::copy(size->begin(), size->end(), out.end() - static_cast<std::ptrdiff_t>(d));
      return out;
    }
    if (op == "reflection_pad" + n || op == "replication_pad" + n) {
      const auto pad = a.ints("padding");
      if (!self || !pad || pad->size() != 2 * d || self->size() < d) return std::nullopt;
      Shape out = *self;
      for (std::size_t k = 0; k < d; ++k) out[out.size() - 1 - k] += (*pad)[2 * k] + (*pad)[2 * k + 1];
      return out;
    }
  }
  if (op == "constant_pad_nd" || op == "pad") {
    const auto pad = a.ints("pad");
    if (!self || !pad || pad->size() % 2 || pad->size() / 2 > self->size()) return std::nullopt;
    Shape out = *self;
    for (std::size_t k = 0; k < pad->size() / 2; ++k) out[out.size() - 1 - k] += (*pad)[2 * k] + (*pad)[2 * k + 1];
    return out;
  }
  if (op == "cat" || op == "concat" || op == "stack") {
    const auto tensors = a.inputs("tensors");
    if (tensors.empty()) return std::nullopt;
    std::optional<Shape> out;
    const std::int64_t dim = a.int_or("dim", 0);
    std::optional<std::size_t> at;
    for (ValueId t : tensors) {
      auto s = known(t).shape;
      if (!s) return std::nullopt;
      if (op == "cat" || op == "concat") {
        if (s->size() == 1 && (*s)[0] == 0) continue;  // torch skips empty 1-d tensors
        if (!at) at = wrap(dim, s->size());
        if (!at || s->size() != (out ? out->size() : s->size())) return std::nullopt;
        if (!out) out = s;
        else (*out)[*at] += (*s)[*at];
      } else if (!out) {
        at = wrap(dim, s->size() + 1);
        if (!at) return std::nullopt;
        out = s;
        out->insert(out->begin() + static_cast<std::ptrdiff_t>(*at), static_cast<std::int64_t>(tensors.size()));
      }
    }
    return out;
  }
  if (!self) return std::nullopt;
  const Shape& x = *self;
  if (op == "narrow" || op == "slice" || op == "select") {
    const auto dim = wrap(a.int_or("dim", 0), x.size());
    if (!dim) return std::nullopt;
    Shape out = x;
    if (op == "narrow") {
      const auto length = a.int_("length");
      if (!length) return std::nullopt;
      out[*dim] = *length;
    } else if (op == "slice") {
      const std::int64_t big = std::int64_t{1} << 62;
      const auto start = a.given("start") ? a.int_("start") : std::optional<std::int64_t>(0);
      const auto end = a.given("end") ? a.int_("end") : std::optional<std::int64_t>(big);
      if (!start || !end) return std::nullopt;
      const auto s = shape_rules::slice(x[*dim], *start, *end, a.int_or("step", 1));
      if (!s) return std::nullopt;
      out[*dim] = s->length;
    } else {
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(*dim));
    }
    return out;
  }
  if (op == "view" || op == "reshape" || op == "_unsafe_view") {
    const auto size = a.ints("size").has_value() ? a.ints("size") : a.ints("shape");
    return size ? shape_rules::view(numel(x), *size) : std::nullopt;
  }
  if (op == "view_as" || op == "reshape_as" || op == "expand_as") return a.shape("other");
  if (op == "flatten") {
    if (x.empty()) return Shape{1};
    const auto b = wrap(a.int_or("start_dim", 0), x.size()), e = wrap(a.int_or("end_dim", -1), x.size());
    if (!b || !e || *b > *e) return std::nullopt;
    Shape out(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(*b));
    std::int64_t n = 1;
    for (std::size_t i = *b; i <= *e; ++i) n *= x[i];
    out.push_back(n);
    out.insert(out.end(), x.begin() + static_cast<std::ptrdiff_t>(*e) + 1, x.end());
    return out;
  }
  if (op == "unsqueeze") {
    const auto dim = wrap(a.int_or("dim", 0), x.size() + 1);
    if (!dim) return std::nullopt;
    Shape out = x;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(*dim), 1);
    return out;
  }
  if (op == "squeeze") {
    std::vector<bool> drop(x.size(), !a.given("dim"));
    if (const auto dims = a.ints("dim")) {
      for (auto d : *dims) {
        const auto i = wrap(d, x.size());
        if (!i) return std::nullopt;
        drop[*i] = true;
      }
    }
    Shape out;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!(drop[i] && x[i] == 1)) out.push_back(x[i]);
    }
    return out;
  }
  if (op == "permute") {
    const auto dims = a.ints("dims");
    if (!dims || dims->size() != x.size()) return std::nullopt;
    Shape out;
    for (auto d : *dims) {
      const auto i = wrap(d, x.size());
      if (!i) return std::nullopt;
      out.push_back(x[*i]);
    }
    return out;
  }
  if (op == "transpose" || op == "swapaxes" || op == "t") {
    Shape out = x;
    if (x.size() < 2) return out;
    const auto i = wrap(a.int_or("dim0", 0), x.size()), j = wrap(a.int_or("dim1", 1), x.size());
    if (!i || !j) return std::nullopt;
    std::swap(out[*i], out[*j]);
    return out;
  }
  if (op == "expand") {
    const auto size = a.ints("size");
    if (!size || size->size() < x.size()) return std::nullopt;
    Shape out = *size;
    const std::size_t lead = size->size() - x.size();
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] == -1) {
        if (i < lead) return std::nullopt;
        out[i] = x[i - lead];
      }
    }
    return out;
  }
  if (op == "repeat") {
    const auto r = a.ints("repeats");
    if (!r || r->size() < x.size()) return std::nullopt;
    Shape out = *r;
    const std::size_t lead = r->size() - x.size();
    for (std::size_t i = 0; i < x.size(); ++i) out[lead + i] *= x[i];
    return out;
  }
  if (op == "linear") {
    const auto w = a.shape("weight");
    if (!w || w->size() != 2 || x.empty()) return std::nullopt;
    Shape out = x;
    out.back() = (*w)[0];
    return out;
  }
  if (op == "matmul" || op == "mm" || op == "bmm") {
    const auto o = a.shape(op == "matmul" ? "other" : "mat2");
    if (!o || x.empty() || o->empty()) return std::nullopt;
    if (o->size() == 1) return x.size() == 1 ? Shape{} : Shape(x.begin(), x.end() - 1);
    if (x.size() == 1) {
      Shape out(o->begin(), o->end() - 2);
      out.push_back(o->back());
      return out;
    }
    const auto batch = shape_rules::broadcast(Shape(x.begin(), x.end() - 2), Shape(o->begin(), o->end() - 2));
    if (!batch) return std::nullopt;
    Shape out = *batch;
    out.push_back(x[x.size() - 2]);
    out.push_back(o->back());
    return out;
  }
  if (op == "addmm") {
    const auto m1 = a.shape("mat1"), m2 = a.shape("mat2");
    if (!m1 || !m2 || m1->size() != 2 || m2->size() != 2) return std::nullopt;
    return Shape{(*m1)[0], (*m2)[1]};
  }
  if (op == "mean" || op == "sum" || op == "amax" || op == "amin" || op == "prod" || op == "std" || op == "var" ||
      op == "logsumexp" || op == "norm" || op == "linalg_vector_norm" || op == "any" || op == "all") {
    return reduce(a, x);
  }
  if (op == "chunk" || op == "split" || op == "unbind") {
    const auto dim = wrap(a.int_or("dim", 0), x.size());
    if (!dim) return std::nullopt;
    Shape out = x;
    if (op == "unbind") {
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(*dim));
      return out;
    }
    const std::int64_t n = x[*dim];
    const auto k = a.int_(op == "chunk" ? "chunks" : "split_size");
    if (!k || *k <= 0) return std::nullopt;
    const std::int64_t each = op == "chunk" ? (n + *k - 1) / *k : *k;
    const std::int64_t start = each * static_cast<std::int64_t>(output);
    if (start >= n && n > 0) return std::nullopt;
    out[*dim] = std::min(each, n - start);
    return out;
  }
  if (op == "pixel_shuffle" || op == "pixel_unshuffle") {
    const auto r = a.int_(op == "pixel_shuffle" ? "upscale_factor" : "downscale_factor");
    if (!r || *r <= 0 || x.size() < 3) return std::nullopt;
    Shape out = x;
    const std::size_t c = x.size() - 3;
    if (op == "pixel_shuffle") {
      out[c] /= *r * *r;
      out[c + 1] *= *r;
      out[c + 2] *= *r;
    } else {
      out[c] *= *r * *r;
      out[c + 1] /= *r;
      out[c + 2] /= *r;
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace tracegraph::detail
