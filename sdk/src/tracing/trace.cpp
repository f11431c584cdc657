#include "tracegraph/trace.h"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "tracegraph/op_table.h"
#include "tracegraph/shape_rules.h"

namespace tracegraph {

// Reaches the tracer a symbolic tensor belongs to (a private member).
struct SymbolicAccess {
  static Tracer* tracer(const SymbolicTensor& x) { return x.tracer_; }
};

namespace {

std::string dims_str(const std::vector<std::int64_t>& v) { return shape_str(v); }

Tracer& tracer_of(const SymbolicTensor& x) {
  Tracer* t = SymbolicAccess::tracer(x);
  if (!t) fail(ErrorCode::kInvalidArgument, "an empty SymbolicTensor was used: symbolic tensors come from trace()");
  return *t;
}

std::int64_t normalize_dim(Tracer& t, const std::string& op, std::int64_t dim, std::int64_t rank, const CallSite& at) {
  const std::int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= std::max<std::int64_t>(rank, 1)) {
    t.misuse(op, "dim " + std::to_string(dim) + " is out of range for rank " + std::to_string(rank), at);
  }
  return d;
}

}  // namespace

Tracer::Tracer() { graph_.set_name("traced"); }

SymbolicTensor Tracer::input(DType dtype, const Shape& shape, std::string name) {
  checked_numel(shape);
  if (name.empty()) name = "input." + std::to_string(graph_.inputs().size());
  SymbolicTensor s;
  s.tracer_ = this;
  s.dtype_ = dtype;
  s.shape_ = shape;
  s.value_ = graph_.add_input(std::move(name), dtype, symbolic(shape));
  return s;
}

SymbolicTensor Tracer::constant(const Tensor& data, const std::string& hint) {
  if (!data.defined()) fail(ErrorCode::kInvalidArgument, "trace: " + hint + " is an undefined tensor");
  SymbolicTensor s;
  s.tracer_ = this;
  s.dtype_ = data.dtype();
  s.shape_ = data.shape();
  s.value_ = graph_.add_constant(graph_.unique_value_name(hint), data);
  return s;
}

SymbolicTensor Tracer::record(const std::string& op, const std::string& overload, const std::vector<SymbolicTensor>& inputs,
                              const std::vector<std::string>& arg_names, Attributes attrs, DType dtype, Shape shape) {
  std::vector<ValueId> ins;
  for (const auto& x : inputs) {
    if (SymbolicAccess::tracer(x) != this) fail(ErrorCode::kInvalidArgument, "trace: " + op + " mixes symbolic tensors of two traces");
    ins.push_back(x.value());
  }
  attrs.set(std::string(kArgNamesAttribute), arg_names);
  if (!overload.empty()) attrs.set(std::string(kOverloadAttribute), overload);
  SymbolicTensor s;
  s.tracer_ = this;
  s.dtype_ = dtype;
  s.shape_ = shape;
  const NodeId n = graph_.add_node(op, std::move(ins), {NewValue("", dtype, symbolic(shape))}, std::move(attrs));
  s.value_ = graph_.node(n).outputs[0];
  return s;
}

void Tracer::misuse(const std::string& op, const std::string& what, const CallSite& at) const {
  fail(ErrorCode::kShapeMismatch, "trace: " + op + " at " + std::filesystem::path(at.file).filename().string() + ":" +
                                      std::to_string(at.line) + ": " + what);
}

// ---- elementwise ----------------------------------------------------------------

namespace {

Shape broadcast(Tracer& t, const std::string& op, const Shape& a, const Shape& b, const CallSite& at) {
  auto out = shape_rules::broadcast(a, b);
  if (!out) t.misuse(op, "shapes " + dims_str(a) + " and " + dims_str(b) + " do not broadcast", at);
  return *out;
}

SymbolicTensor binary(const char* op, const SymbolicTensor& a, const SymbolicTensor& b, const CallSite& at) {
  Tracer& t = tracer_of(a);
  if (a.dtype() != b.dtype()) {
    t.misuse(op, "dtypes " + std::string(dtype_name(a.dtype())) + " and " + std::string(dtype_name(b.dtype())) + " differ", at);
  }
  const Shape shape = broadcast(t, op, a.shape(), b.shape(), at);
  return t.record(op, "Tensor", {a, b}, {"self", "other"}, {}, a.dtype(), shape);
}

SymbolicTensor binary_scalar(const char* op, const SymbolicTensor& a, double b, const CallSite& at) {
  Tracer& t = tracer_of(a);
  if (!is_floating(a.dtype())) t.misuse(op, "a float scalar with a " + std::string(dtype_name(a.dtype())) + " tensor", at);
  Attributes attrs;
  attrs.set("other", b);
  return t.record(op, "Scalar", {a}, {"self"}, std::move(attrs), a.dtype(), a.shape());
}

SymbolicTensor unary(const SymbolicTensor& x, const char* op, const CallSite& at, Attributes attrs = {}, const std::string& overload = "") {
  Tracer& t = tracer_of(x);
  if (!is_floating(x.dtype())) t.misuse(op, "needs a floating-point tensor, given " + std::string(dtype_name(x.dtype())), at);
  return t.record(op, overload, {x}, {"self"}, std::move(attrs), x.dtype(), x.shape());
}

}  // namespace

SymbolicTensor operator+(const SymbolicTensor& a, Operand<const SymbolicTensor&> b) { return binary("aten::add", a, b.value, b.at); }
SymbolicTensor operator-(const SymbolicTensor& a, Operand<const SymbolicTensor&> b) { return binary("aten::sub", a, b.value, b.at); }
SymbolicTensor operator*(const SymbolicTensor& a, Operand<const SymbolicTensor&> b) { return binary("aten::mul", a, b.value, b.at); }
SymbolicTensor operator/(const SymbolicTensor& a, Operand<const SymbolicTensor&> b) { return binary("aten::div", a, b.value, b.at); }
SymbolicTensor operator+(const SymbolicTensor& a, Operand<double> b) { return binary_scalar("aten::add", a, b.value, b.at); }
SymbolicTensor operator-(const SymbolicTensor& a, Operand<double> b) { return binary_scalar("aten::sub", a, b.value, b.at); }
SymbolicTensor operator*(const SymbolicTensor& a, Operand<double> b) { return binary_scalar("aten::mul", a, b.value, b.at); }
SymbolicTensor operator/(const SymbolicTensor& a, Operand<double> b) { return binary_scalar("aten::div", a, b.value, b.at); }

SymbolicTensor SymbolicTensor::relu(CallSite at) const { return unary(*this, "aten::relu", at); }
SymbolicTensor SymbolicTensor::relu6(CallSite at) const { return unary(*this, "aten::relu6", at); }
SymbolicTensor SymbolicTensor::sigmoid(CallSite at) const { return unary(*this, "aten::sigmoid", at); }
SymbolicTensor SymbolicTensor::tanh(CallSite at) const { return unary(*this, "aten::tanh", at); }
SymbolicTensor SymbolicTensor::hardswish(CallSite at) const { return unary(*this, "aten::hardswish", at); }
SymbolicTensor SymbolicTensor::silu(CallSite at) const { return unary(*this, "aten::silu", at); }

SymbolicTensor SymbolicTensor::clamp(std::optional<double> min, std::optional<double> max, CallSite at) const {
  Attributes a;
  if (min) a.set("min", *min);
  if (max) a.set("max", *max);
  if (!min && !max) tracer_of(*this).misuse("aten::clamp", "needs a min or a max", at);
  return unary(*this, "aten::clamp", at, std::move(a));
}

SymbolicTensor SymbolicTensor::softmax(std::int64_t dim, CallSite at) const {
  Attributes a;
  a.set("dim", normalize_dim(tracer_of(*this), "aten::softmax", dim, this->dim(), at));
  return unary(*this, "aten::softmax", at, std::move(a), "int");
}

SymbolicTensor SymbolicTensor::log_softmax(std::int64_t dim, CallSite at) const {
  Attributes a;
  a.set("dim", normalize_dim(tracer_of(*this), "aten::log_softmax", dim, this->dim(), at));
  return unary(*this, "aten::log_softmax", at, std::move(a), "int");
}

// ---- shapes ---------------------------------------------------------------------

SymbolicTensor SymbolicTensor::matmul(const SymbolicTensor& other, CallSite at) const {
  Tracer& t = tracer_of(*this);
  const Shape& a = shape_;
  const Shape& b = other.shape();
  if (dtype_ != other.dtype()) t.misuse("aten::matmul", "dtypes differ", at);
  if (a.size() < 1 || b.size() < 1) t.misuse("aten::matmul", "needs tensors of rank 1 or more", at);
  const std::int64_t k_a = a.back();
  const std::int64_t k_b = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (k_a != k_b) t.misuse("aten::matmul", "inner dims differ: " + dims_str(a) + " @ " + dims_str(b), at);
  Shape out;
  if (a.size() == 1 && b.size() == 1) {
    out = {};
  } else if (b.size() == 1) {
    out = Shape(a.begin(), a.end() - 1);
  } else if (a.size() == 1) {
    out = Shape(b.begin(), b.end() - 2);
    out.push_back(b.back());
  } else {
    const Shape batch = broadcast(t, "aten::matmul", Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), at);
    out = batch;
    out.push_back(a[a.size() - 2]);
    out.push_back(b.back());
  }
  return t.record("aten::matmul", "", {*this, other}, {"self", "other"}, {}, dtype_, out);
}

SymbolicTensor SymbolicTensor::reshape(Shape shape, CallSite at) const {
  Tracer& t = tracer_of(*this);
  const std::int64_t n = checked_numel(shape_);
  const auto viewed = shape_rules::view(n, shape);
  if (!viewed) {
    t.misuse("aten::reshape", dims_str(shape_) + " cannot be viewed as " + dims_str(shape) + " (" + std::to_string(n) +
                                  " elements; at most one -1, other dims not negative)", at);
  }
  const Shape out = *viewed;
  Attributes a;
  a.set("shape", shape);
  return t.record("aten::reshape", "", {*this}, {"self"}, std::move(a), dtype_, out);
}

SymbolicTensor SymbolicTensor::permute(std::vector<std::int64_t> dims, CallSite at) const {
  Tracer& t = tracer_of(*this);
  if (static_cast<std::int64_t>(dims.size()) != dim()) t.misuse("aten::permute", dims_str(dims) + " for rank " + std::to_string(dim()), at);
  std::vector<bool> seen(dims.size(), false);
  Shape out;
  for (auto& d : dims) {
    d = normalize_dim(t, "aten::permute", d, dim(), at);
    if (seen[static_cast<std::size_t>(d)]) t.misuse("aten::permute", "dim " + std::to_string(d) + " repeats", at);
    seen[static_cast<std::size_t>(d)] = true;
    out.push_back(shape_[static_cast<std::size_t>(d)]);
  }
  Attributes a;
  a.set("dims", dims);
  return t.record("aten::permute", "", {*this}, {"self"}, std::move(a), dtype_, out);
}

SymbolicTensor SymbolicTensor::transpose(std::int64_t dim0, std::int64_t dim1, CallSite at) const {
  Tracer& t = tracer_of(*this);
  const std::int64_t a = normalize_dim(t, "aten::transpose", dim0, dim(), at);
  const std::int64_t b = normalize_dim(t, "aten::transpose", dim1, dim(), at);
  Shape out = shape_;
  std::swap(out[static_cast<std::size_t>(a)], out[static_cast<std::size_t>(b)]);
  Attributes attrs;
  attrs.set("dim0", a);
  attrs.set("dim1", b);
  return t.record("aten::transpose", "int", {*this}, {"self"}, std::move(attrs), dtype_, out);
}

SymbolicTensor SymbolicTensor::flatten(std::int64_t start_dim, std::int64_t end_dim, CallSite at) const {
  Tracer& t = tracer_of(*this);
  const std::int64_t s = normalize_dim(t, "aten::flatten", start_dim, dim(), at);
  const std::int64_t e = normalize_dim(t, "aten::flatten", end_dim, dim(), at);
  if (s > e) t.misuse("aten::flatten", "start_dim after end_dim", at);
  Shape out(shape_.begin(), shape_.begin() + s);
  std::int64_t n = 1;
  for (std::int64_t i = s; i <= e && !shape_.empty(); ++i) n *= shape_[static_cast<std::size_t>(i)];
  out.push_back(n);
  out.insert(out.end(), shape_.begin() + std::min<std::int64_t>(e + 1, dim()), shape_.end());
  Attributes a;
  a.set("start_dim", s);
  a.set("end_dim", e);
  return t.record("aten::flatten", "using_ints", {*this}, {"self"}, std::move(a), dtype_, out);
}

SymbolicTensor SymbolicTensor::slice(std::int64_t dim_, std::int64_t start, std::int64_t end, std::int64_t step, CallSite at) const {
  Tracer& t = tracer_of(*this);
  const std::int64_t d = normalize_dim(t, "aten::slice", dim_, dim(), at);
  const auto taken = shape_rules::slice(shape_[static_cast<std::size_t>(d)], start, end, step);
  if (!taken) t.misuse("aten::slice", "step must be positive", at);
  Shape out = shape_;
  out[static_cast<std::size_t>(d)] = taken->length;
  Attributes a;
  a.set("dim", d);
  a.set("start", start);
  a.set("end", end);
  a.set("step", step);
  return t.record("aten::slice", "Tensor", {*this}, {"self"}, std::move(a), dtype_, out);
}

namespace {

SymbolicTensor reduce(const SymbolicTensor& x, const char* op, std::vector<std::int64_t> dims, bool keepdim, const CallSite& at) {
  Tracer& t = tracer_of(x);
  std::vector<bool> reduced(static_cast<std::size_t>(x.dim()), dims.empty());
  for (auto& d : dims) {
    d = normalize_dim(t, op, d, x.dim(), at);
    reduced[static_cast<std::size_t>(d)] = true;
  }
  Shape out;
  for (std::size_t i = 0; i < x.shape().size(); ++i) {
    if (!reduced[i]) out.push_back(x.shape()[i]);
    else if (keepdim) out.push_back(1);
  }
  Attributes a;
  a.set("dim", dims);
  a.set("keepdim", keepdim);
  return t.record(op, std::string(op) == "aten::sum" ? "dim_IntList" : "dim", {x}, {"self"}, std::move(a), x.dtype(), out);
}

}  // namespace

SymbolicTensor SymbolicTensor::sum(std::vector<std::int64_t> dims, bool keepdim, CallSite at) const {
  return reduce(*this, "aten::sum", std::move(dims), keepdim, at);
}
SymbolicTensor SymbolicTensor::mean(std::vector<std::int64_t> dims, bool keepdim, CallSite at) const {
  if (!is_floating(dtype_)) tracer_of(*this).misuse("aten::mean", "needs a floating-point tensor", at);
  return reduce(*this, "aten::mean", std::move(dims), keepdim, at);
}

// ---- layers ---------------------------------------------------------------------

namespace {


SymbolicTensor conv(const char* op, std::size_t spatial, const SymbolicTensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                    std::vector<std::int64_t> stride, std::vector<std::int64_t> padding, std::vector<std::int64_t> dilation,
                    std::int64_t groups, const CallSite& at) {
  Tracer& t = tracer_of(x);
  if (x.dim() != static_cast<std::int64_t>(spatial + 2)) {
    t.misuse(op, "input " + dims_str(x.shape()) + " must have rank " + std::to_string(spatial + 2) + " (N, C, spatial...)", at);
  }
  if (weight.dim() != static_cast<std::int64_t>(spatial + 2)) t.misuse(op, "weight " + dims_str(weight.shape()) + " has the wrong rank", at);
  if (weight.dtype() != x.dtype()) t.misuse(op, "weight is " + std::string(dtype_name(weight.dtype())) + ", input " + std::string(dtype_name(x.dtype())), at);
  if (groups < 1 || x.shape()[1] != weight.shape()[1] * groups) {
    t.misuse(op, "input has " + std::to_string(x.shape()[1]) + " channels, weight " + dims_str(weight.shape()) + " with groups=" +
                     std::to_string(groups) + " expects " + std::to_string(weight.shape()[1] * groups), at);
  }
  if (stride.size() != spatial || padding.size() != spatial || dilation.size() != spatial) t.misuse(op, "stride, padding and dilation need one entry per spatial dim", at);
  if (bias && (bias->dim() != 1 || bias->shape()[0] != weight.shape()[0])) t.misuse(op, "bias " + dims_str(bias->shape()) + " does not match the weight", at);
  Shape out = {x.shape()[0], weight.shape()[0]};
  for (std::size_t i = 0; i < spatial; ++i) {
    const auto o = shape_rules::window_output(x.shape()[i + 2], weight.shape()[i + 2], stride[i], padding[i], dilation[i]);
    if (!o || *o <= 0) t.misuse(op, "the kernel is larger than the padded input " + dims_str(x.shape()), at);
    out.push_back(*o);
  }
  std::vector<SymbolicTensor> ins = {x, t.constant(weight, "weight")};
  std::vector<std::string> names = {"input", "weight"};
  if (bias) {
    ins.push_back(t.constant(*bias, "bias"));
    names.push_back("bias");
  }
  Attributes a;
  a.set("stride", stride);
  a.set("padding", padding);
  a.set("dilation", dilation);
  a.set("groups", groups);
  return t.record(op, "", ins, names, std::move(a), x.dtype(), out);
}

SymbolicTensor pool(const char* op, const SymbolicTensor& x, std::vector<std::int64_t> kernel, std::vector<std::int64_t> stride,
                    std::vector<std::int64_t> padding, const CallSite& at) {
  Tracer& t = tracer_of(x);
  if (x.dim() != 4 && x.dim() != 3) t.misuse(op, "input " + dims_str(x.shape()) + " must have rank 3 or 4", at);
  if (stride.empty()) stride = kernel;
  if (kernel.size() != 2 || stride.size() != 2 || padding.size() != 2) t.misuse(op, "kernel, stride and padding need two entries", at);
  Shape out(x.shape().begin(), x.shape().end() - 2);
  for (std::size_t i = 0; i < 2; ++i) {
    if (!shape_rules::pool_padding_fits(kernel[i], padding[i])) t.misuse(op, "padding must be at most half the kernel", at);
    const auto o = shape_rules::window_output(x.shape()[x.shape().size() - 2 + i], kernel[i], stride[i], padding[i], 1);
    if (!o || *o <= 0) t.misuse(op, "the window is larger than the input " + dims_str(x.shape()), at);
    out.push_back(*o);
  }
  Attributes a;
  a.set("kernel_size", kernel);
  a.set("stride", stride);
  a.set("padding", padding);
  return t.record(op, "", {x}, {"self"}, std::move(a), x.dtype(), out);
}

}  // namespace

SymbolicTensor conv2d(const SymbolicTensor& x, const Tensor& weight, const std::optional<Tensor>& bias, std::vector<std::int64_t> stride,
                      std::vector<std::int64_t> padding, std::vector<std::int64_t> dilation, std::int64_t groups, CallSite at) {
  return conv("aten::conv2d", 2, x, weight, bias, std::move(stride), std::move(padding), std::move(dilation), groups, at);
}

SymbolicTensor conv3d(const SymbolicTensor& x, const Tensor& weight, const std::optional<Tensor>& bias, std::vector<std::int64_t> stride,
                      std::vector<std::int64_t> padding, std::vector<std::int64_t> dilation, std::int64_t groups, CallSite at) {
  return conv("aten::conv3d", 3, x, weight, bias, std::move(stride), std::move(padding), std::move(dilation), groups, at);
}

SymbolicTensor linear(const SymbolicTensor& x, const Tensor& weight, const std::optional<Tensor>& bias, CallSite at) {
  Tracer& t = tracer_of(x);
  if (weight.dim() != 2 || x.dim() < 1 || x.shape().back() != weight.shape()[1]) {
    t.misuse("aten::linear", "input " + dims_str(x.shape()) + " and weight " + dims_str(weight.shape()) + " do not fit", at);
  }
  if (weight.dtype() != x.dtype()) t.misuse("aten::linear", "weight and input dtypes differ", at);
  Shape out = x.shape();
  out.back() = weight.shape()[0];
  std::vector<SymbolicTensor> ins = {x, t.constant(weight, "weight")};
  std::vector<std::string> names = {"input", "weight"};
  if (bias) {
    ins.push_back(t.constant(*bias, "bias"));
    names.push_back("bias");
  }
  return t.record("aten::linear", "", ins, names, {}, x.dtype(), out);
}

SymbolicTensor max_pool2d(const SymbolicTensor& x, std::vector<std::int64_t> kernel, std::vector<std::int64_t> stride,
                          std::vector<std::int64_t> padding, CallSite at) {
  return pool("aten::max_pool2d", x, std::move(kernel), std::move(stride), std::move(padding), at);
}

SymbolicTensor avg_pool2d(const SymbolicTensor& x, std::vector<std::int64_t> kernel, std::vector<std::int64_t> stride,
                          std::vector<std::int64_t> padding, CallSite at) {
  return pool("aten::avg_pool2d", x, std::move(kernel), std::move(stride), std::move(padding), at);
}

SymbolicTensor cat(const std::vector<SymbolicTensor>& tensors, std::int64_t dim, CallSite at) {
  if (tensors.empty()) fail(ErrorCode::kInvalidArgument, "trace: aten::cat of no tensors");
  Tracer& t = tracer_of(tensors[0]);
  const Shape& first = tensors[0].shape();
  const std::int64_t d = normalize_dim(t, "aten::cat", dim, static_cast<std::int64_t>(first.size()), at);
  Shape out = first;
  out[static_cast<std::size_t>(d)] = 0;
  for (const auto& x : tensors) {
    if (x.dtype() != tensors[0].dtype()) t.misuse("aten::cat", "dtypes differ", at);
    if (x.shape().size() != first.size()) t.misuse("aten::cat", "ranks differ: " + dims_str(first) + " and " + dims_str(x.shape()), at);
    for (std::size_t i = 0; i < first.size(); ++i) {
      if (static_cast<std::int64_t>(i) != d && x.shape()[i] != first[i]) {
        t.misuse("aten::cat", "shapes " + dims_str(first) + " and " + dims_str(x.shape()) + " differ outside dim " + std::to_string(d), at);
      }
    }
    out[static_cast<std::size_t>(d)] += x.shape()[static_cast<std::size_t>(d)];
  }
  Attributes a;
  a.set("dim", d);
  return t.record("aten::cat", "", tensors, std::vector<std::string>(tensors.size(), "tensors"), std::move(a), tensors[0].dtype(), out);
}

}  // namespace tracegraph
