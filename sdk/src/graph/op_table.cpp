#include "tracegraph/op_table.h"

#include "tracegraph/error.h"

#include <algorithm>
#include <array>

namespace tracegraph {
namespace {

bool ends_with_inplace_underscore(std::string_view op) {
  return op.size() > 1 && op.back() == '_' && !(op.size() > 2 && op.substr(op.size() - 2) == "__");
}

// torch.export's spelling: "aten.add.Tensor" -> {"aten", "add", "Tensor"}.
struct DottedName {
  std::string_view ns, name, overload;
};
std::optional<DottedName> dotted(std::string_view op) {
  if (op.find("::") != std::string_view::npos) return std::nullopt;
  const auto first = op.find('.');
  if (first == std::string_view::npos || first == 0) return std::nullopt;
  const auto last = op.rfind('.');
  if (last == first || last + 1 == op.size() || last == first + 1) return std::nullopt;
  return DottedName{op.substr(0, first), op.substr(first + 1, last - first - 1), op.substr(last + 1)};
}

bool is_aten(std::string_view op) {
  if (op.substr(0, 6) == "aten::") return true;
  auto d = dotted(op);
  return d && d->ns == "aten";
}

// The op's base name without a trailing in-place '_' ("relu" for "aten::relu_").
std::string_view base_name(std::string_view op) {
  op = op_base(op);
  if (ends_with_inplace_underscore(op)) op.remove_suffix(1);
  return op;
}

void copy_attr(const Node& node, std::string_view from, Attributes& to, std::string to_name) {
  if (const AttributeValue* v = node.attributes.find(from)) {
    if (std::holds_alternative<std::int64_t>(*v) || std::holds_alternative<double>(*v)) {
      to.set(std::move(to_name), *arg_float(node, from));
    }
  }
}

struct Row {
  std::string_view op;         // base name, without "aten::" and a trailing '_'
  std::string_view canonical;  // canonical name
};

// Ops whose canonical form takes no attributes beyond the name.
constexpr std::array kSimple = {
    Row{"sigmoid", "sigmoid"}, Row{"tanh", "tanh"}, Row{"relu", "relu"}, Row{"hardswish", "hardswish"},
    Row{"hardsigmoid", "hardsigmoid"}, Row{"silu", "silu"}, Row{"gelu", "gelu"}, Row{"elu", "elu"},
    Row{"leaky_relu", "leaky_relu"}, Row{"conv1d", "conv"}, Row{"conv2d", "conv"}, Row{"conv3d", "conv"},
    Row{"conv_transpose1d", "conv_transpose"}, Row{"conv_transpose2d", "conv_transpose"},
    Row{"conv_transpose3d", "conv_transpose"}, Row{"linear", "linear"}, Row{"addmm", "linear"},
    Row{"matmul", "matmul"}, Row{"mm", "matmul"}, Row{"bmm", "matmul"}, Row{"max_pool1d", "max_pool"}, Row{"max_pool2d", "max_pool"}, Row{"max_pool3d", "max_pool"},
    Row{"avg_pool1d", "avg_pool"}, Row{"avg_pool2d", "avg_pool"}, Row{"avg_pool3d", "avg_pool"},
    Row{"adaptive_avg_pool1d", "adaptive_avg_pool"}, Row{"adaptive_avg_pool2d", "adaptive_avg_pool"},
    Row{"adaptive_avg_pool3d", "adaptive_avg_pool"}, Row{"add", "add"}, Row{"sub", "sub"}, Row{"rsub", "rsub"},
    Row{"mul", "mul"}, Row{"div", "div"}, Row{"view", "view"}, Row{"reshape", "reshape"},
    Row{"slice", "slice"}, Row{"narrow", "slice"}, Row{"select", "select"}, Row{"permute", "permute"},
    Row{"transpose", "transpose"}, Row{"t", "transpose"}, Row{"squeeze", "squeeze"}, Row{"unsqueeze", "unsqueeze"},
    Row{"flatten", "flatten"}, Row{"contiguous", "contiguous"}, Row{"clone", "clone"}, Row{"detach", "detach"},
    Row{"expand", "expand"}, Row{"upsample_nearest1d", "upsample"}, Row{"upsample_nearest2d", "upsample"},
    Row{"upsample_nearest3d", "upsample"}, Row{"upsample_bilinear2d", "upsample"},
    Row{"upsample_trilinear3d", "upsample"}, Row{"upsample_linear1d", "upsample"},
    Row{"_upsample_nearest_exact1d", "upsample"}, Row{"_upsample_nearest_exact2d", "upsample"},
    Row{"_upsample_nearest_exact3d", "upsample"}, Row{"adaptive_max_pool1d", "adaptive_max_pool"},
    Row{"adaptive_max_pool2d", "adaptive_max_pool"}, Row{"adaptive_max_pool3d", "adaptive_max_pool"}, Row{"__interpolate", "upsample"}, Row{"stack", "stack"},
    Row{"mean", "mean"}, Row{"sum", "sum"}, Row{"exp", "exp"}, Row{"log", "log"}, Row{"pow", "pow"},
    Row{"neg", "neg"}, Row{"abs", "abs"}, Row{"sqrt", "sqrt"}, Row{"pad", "pad"}, Row{"constant_pad_nd", "pad"},
    Row{"index", "gather"}, Row{"_unsafe_index", "gather"}, Row{"index_select", "gather"}, Row{"gather", "gather"},
    Row{"take_along_dim", "gather"}, Row{"split", "split"}, Row{"split_with_sizes", "split"}, Row{"unsafe_split", "split"},
    Row{"chunk", "split"}, Row{"unbind", "split"},
};

}  // namespace

// Base names canonical_op() reads beside kSimple's rows.
constexpr std::array kSpecial = {
    "relu6", "hardtanh", "clamp", "clip", "clamp_min", "clamp_max", "softmax", "_softmax", "log_softmax",
    "_log_softmax", "cat", "concat", "concatenate", "_convolution", "convolution", "batch_norm", "native_batch_norm",
    "_native_batch_norm_legit_no_training", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "alias", "dropout", "feature_dropout", "alpha_dropout", "to", "_to_copy", "type_as",
    "float", "double", "half",
};

std::optional<OpName> parse_op_name(std::string_view op) {
  if (op.find("::") != std::string_view::npos) return OpName{std::string(op), std::nullopt};
  if (auto d = dotted(op)) {
    return OpName{std::string(d->ns) + "::" + std::string(d->name), d->overload == "default" ? std::string() : std::string(d->overload)};
  }
  return std::nullopt;
}

std::string_view op_base(std::string_view op) {
  if (auto colon = op.rfind("::"); colon != std::string_view::npos) return op.substr(colon + 2);
  if (auto d = dotted(op)) return d->name;
  return op;
}

std::optional<std::string> node_overload(const Node& node) {
  if (auto parsed = parse_op_name(node.op); parsed && parsed->overload) return parsed->overload;
  return node.attributes.get_string(kOverloadAttribute);
}

bool is_inplace_op(std::string_view op) { return is_aten(op) && ends_with_inplace_underscore(op_base(op)); }

std::string functional_op_name(std::string_view op) {
  if (!is_inplace_op(op)) return std::string(op);
  if (auto d = dotted(op)) {
    return std::string(d->ns) + "." + std::string(d->name.substr(0, d->name.size() - 1)) + "." + std::string(d->overload);
  }
  return std::string(op.substr(0, op.size() - 1));
}

std::optional<std::size_t> named_spatial_rank(std::string_view op) {
  const std::string_view base = op_base(op);
  for (std::size_t rank : {1, 2, 3}) {
    const char name[] = {static_cast<char>('0' + rank), 'd', '\0'};
    if (base.find(name) != std::string_view::npos) return rank;
  }
  return std::nullopt;
}

bool is_view_op(std::string_view op) {
  static constexpr std::array kViews = {"view", "reshape", "slice", "narrow", "select", "permute", "transpose",
                                        "t", "squeeze", "unsqueeze", "flatten", "expand", "expand_as",
                                        "as_strided", "diagonal", "unfold", "view_as", "alias", "detach",
                                        "unbind", "split", "chunk", "__getitem__", "numpy_T", "movedim"};
  const std::string_view base = op_base(op);
  return std::find(kViews.begin(), kViews.end(), base) != kViews.end();
}

std::vector<ValueId> inputs_for_arg(const Node& node, std::string_view arg) {
  std::vector<ValueId> out;
  const AttributeValue* names = node.attributes.find(kArgNamesAttribute);
  if (!names || !std::holds_alternative<std::vector<std::string>>(*names)) return out;
  const auto& list = std::get<std::vector<std::string>>(*names);
  for (std::size_t i = 0; i < list.size() && i < node.inputs.size(); ++i) {
    if (list[i] == arg) out.push_back(node.inputs[i]);
  }
  return out;
}

std::optional<ValueId> input_for_arg(const Node& node, std::string_view arg, std::size_t fallback) {
  if (node.attributes.contains(kArgNamesAttribute)) {
    auto v = inputs_for_arg(node, arg);
    if (v.empty()) return std::nullopt;
    return v.front();
  }
  if (fallback < node.inputs.size()) return node.inputs[fallback];
  return std::nullopt;
}

namespace {

[[noreturn]] void wrong_kind(const Node& node, std::string_view name, const AttributeValue& value, const char* wanted) {
  fail(ErrorCode::kSchema, "node '" + node.name + "' (" + node.op + "): argument '" + std::string(name) + "' is " +
                               std::string(attribute_kind(value)) + " where " + wanted + " is expected");
}

}  // namespace

std::optional<std::int64_t> arg_int(const Node& node, std::string_view name) {
  const AttributeValue* a = node.attributes.find(name);
  if (!a) return std::nullopt;
  if (auto* i = std::get_if<std::int64_t>(a)) return *i;
  if (auto* b = std::get_if<bool>(a)) return *b ? 1 : 0;
  if (auto* v = std::get_if<std::vector<std::int64_t>>(a); v && v->size() == 1) return v->front();
  wrong_kind(node, name, *a, "an int");
}

std::optional<double> arg_float(const Node& node, std::string_view name) {
  const AttributeValue* a = node.attributes.find(name);
  if (!a) return std::nullopt;
  if (auto* d = std::get_if<double>(a)) return *d;
  if (auto* i = std::get_if<std::int64_t>(a)) return static_cast<double>(*i);
  if (auto* b = std::get_if<bool>(a)) return *b ? 1.0 : 0.0;  // a Scalar may be a bool (fill(x, True))
  wrong_kind(node, name, *a, "a number");
}

std::optional<bool> arg_bool(const Node& node, std::string_view name) {
  const AttributeValue* a = node.attributes.find(name);
  if (!a) return std::nullopt;
  if (auto* b = std::get_if<bool>(a)) return *b;
  if (auto* i = std::get_if<std::int64_t>(a); i && (*i == 0 || *i == 1)) return *i == 1;
  wrong_kind(node, name, *a, "a bool");
}

std::optional<std::vector<std::int64_t>> arg_ints(const Node& node, std::string_view name) {
  const AttributeValue* a = node.attributes.find(name);
  if (!a) return std::nullopt;
  if (auto* v = std::get_if<std::vector<std::int64_t>>(a)) return *v;
  if (auto* i = std::get_if<std::int64_t>(a)) return std::vector<std::int64_t>{*i};
  wrong_kind(node, name, *a, "a list of ints");
}

std::vector<std::string> known_ops() {
  std::vector<std::string> out;
  for (const Row& row : kSimple) out.emplace_back(row.op);
  for (const char* op : kSpecial) out.emplace_back(op);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<CanonicalOp> canonical_op(const Node& node) {
  if (!is_aten(node.op)) {
    // Ops written by the SDK itself (trace(), transforms) are already canonical.
    if (!parse_op_name(node.op)) return CanonicalOp{node.op, node.attributes};
    return std::nullopt;
  }
  std::string_view base = base_name(node.op);
  // Core ATen's copying variants of views (functionalized graphs) compute the same values.
  if (base.size() > 5 && base.substr(base.size() - 5) == "_copy" && base != "_to_copy") base.remove_suffix(5);
  CanonicalOp out;
  if (base == "relu6") {
    out.name = "clip";
    out.attributes.set("min", 0.0);
    out.attributes.set("max", 6.0);
    return out;
  }
  if (base == "hardtanh") {
    out.name = "clip";
    // hardtanh's defaults are -1 and 1.
    out.attributes.set("min", arg_float(node, "min_val").value_or(-1.0));
    out.attributes.set("max", arg_float(node, "max_val").value_or(1.0));
    return out;
  }
  if (base == "clamp" || base == "clip" || base == "clamp_min" || base == "clamp_max") {
    out.name = "clip";
    copy_attr(node, "min", out.attributes, "min");
    copy_attr(node, "max", out.attributes, "max");
    return out;
  }
  if (base == "softmax" || base == "_softmax" || base == "log_softmax" || base == "_log_softmax") {
    out.name = base.find("log") != std::string_view::npos ? "log_softmax" : "softmax";
    if (auto dim = arg_int(node, "dim")) out.attributes.set("dim", *dim);
    return out;
  }
  if (base == "cat" || base == "concat" || base == "concatenate") {
    out.name = "cat";
    out.attributes.set("dim", arg_int(node, "dim").value_or(0));
    return out;
  }
  if (base == "_convolution" || base == "convolution") {
    const bool transposed = arg_bool(node, "transposed").value_or(false);
    out.name = transposed ? "conv_transpose" : "conv";
    return out;
  }
  if (base == "batch_norm" || base == "native_batch_norm" || base == "_native_batch_norm_legit_no_training") {
    // Core ATen's are one output (0) and two statistics (1, 2) no one reads in eval mode.
    out.name = "batch_norm";
    out.attributes.set("training", base != "_native_batch_norm_legit_no_training" &&
                                       arg_bool(node, "training").value_or(true));
    return out;
  }
  if (base == "max_pool1d_with_indices" || base == "max_pool2d_with_indices" || base == "max_pool3d_with_indices") {
    out.name = "max_pool";  // output 0; output 1 holds the indices
    return out;
  }
  if (base == "alias") {
    out.name = "detach";  // the same values
    return out;
  }
  if (base == "dropout" || base == "feature_dropout" || base == "alpha_dropout") {
    out.name = "dropout";
    out.attributes.set("train", arg_bool(node, "train").value_or(true));
    return out;
  }
  if (base == "to" || base == "_to_copy" || base == "type_as" || base == "float" || base == "double" || base == "half") {
    out.name = "cast";
    if (base == "float") out.attributes.set("dtype", std::string("float32"));
    else if (base == "double") out.attributes.set("dtype", std::string("float64"));
    else if (base == "half") out.attributes.set("dtype", std::string("float16"));
    return out;
  }
  for (const Row& row : kSimple) {
    if (row.op == base) {
      out.name = std::string(row.canonical);
      // Only these take one dim; mean and sum take a list (x.mean([2, 3])).
      if (out.name == "stack" || out.name == "slice" || out.name == "select") {
        if (auto dim = arg_int(node, "dim")) out.attributes.set("dim", *dim);
      }
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace tracegraph
