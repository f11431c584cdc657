#include "tracegraph/validate.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "tracegraph/error.h"
#include "tracegraph/op_table.h"
#include "tracegraph/shape_rules.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph {
namespace {

using i64 = std::int64_t;
using Ints = std::vector<i64>;

std::string list_str(const Ints& v) { return shape_str(symbolic(v)); }

class NodeCheck {
 public:
  NodeCheck(const Graph& g, const Node& n) : g_(g), n_(n) {}

  [[noreturn]] void broken(ErrorCode code, const std::string& what) const {
    fail(code, "node '" + n_.name + "' (" + n_.op + "): " + what);
  }

  // An int list argument given as an attribute; nullopt when absent, computed
  // at run time, or a named padding ("same", the convolution's own rule).
  std::optional<Ints> ints(std::string_view name) const {
    const AttributeValue* a = n_.attributes.find(name);
    if (a && std::holds_alternative<std::string>(*a)) return std::nullopt;
    return arg_ints(n_, name);
  }
  std::optional<i64> int_of(std::string_view name) const { return arg_int(n_, name); }
  // `name` as `rank` entries: one entry repeats; empty or absent gives `fallback`.
  Ints spatial(std::string_view name, std::size_t rank, const Ints& fallback) const {
    std::optional<Ints> v = ints(name);
    if (!v || v->empty()) return fallback;
    if (v->size() == 1) return Ints(rank, (*v)[0]);
    if (v->size() != rank) {
      broken(ErrorCode::kSchema, "attribute '" + std::string(name) + "' " + list_str(*v) + " has " + std::to_string(v->size()) +
                                     " entries for " + std::to_string(rank) + " spatial dims");
    }
    return *v;
  }
  void positive(std::string_view name, const Ints& v) const {
    for (i64 x : v) {
      if (x <= 0) broken(ErrorCode::kInvalidArgument, "attribute '" + std::string(name) + "' " + list_str(v) + ": each must be positive");
    }
  }
  void not_negative(std::string_view name, const Ints& v) const {
    for (i64 x : v) {
      if (x < 0) broken(ErrorCode::kInvalidArgument, "attribute '" + std::string(name) + "' " + list_str(v) + ": negative padding is not supported");
    }
  }

  // The static shape of the value filling `arg` (or input `fallback`).
  std::optional<Ints> shape_of(std::string_view arg, std::size_t fallback) const {
    auto v = input_for_arg(n_, arg, fallback);
    if (!v) return std::nullopt;
    const auto& s = g_.value(*v).shape;
    if (!s) return std::nullopt;
    Ints out;
    for (const Dim& d : *s) {
      if (!d.is_static()) return std::nullopt;
      out.push_back(d.size);
    }
    return out;
  }
  std::optional<Ints> input_shape() const {
    if (auto s = shape_of("input", 0)) return s;
    return shape_of("self", 0);
  }

  i64 dim_in_range(std::string_view name, i64 dim, std::size_t rank) const {
    const i64 r = std::max<i64>(static_cast<i64>(rank), 1);
    if (dim < -r || dim >= r) {
      broken(ErrorCode::kOutOfRange, "attribute '" + std::string(name) + "' " + std::to_string(dim) + " is out of range for a tensor of rank " + std::to_string(rank));
    }
    return dim < 0 ? dim + r : dim;
  }

  void convolution(bool transposed) const {
    auto w = shape_of("weight", 1);
    if (!w) return;
    if (w->size() < 3) broken(ErrorCode::kShapeMismatch, "weight " + list_str(*w) + " has no spatial dims");
    const std::size_t k = w->size() - 2;
    const Ints stride = spatial("stride", k, Ints(k, 1));
    const Ints dilation = spatial("dilation", k, Ints(k, 1));
    positive("stride", stride);
    positive("dilation", dilation);
    const bool named_padding = n_.attributes.find("padding") && std::holds_alternative<std::string>(*n_.attributes.find("padding"));
    const Ints padding = named_padding ? Ints(k, 0) : spatial("padding", k, Ints(k, 0));
    not_negative("padding", padding);
    const i64 groups = int_of("groups").value_or(1);
    if (groups <= 0) broken(ErrorCode::kInvalidArgument, "attribute 'groups' " + std::to_string(groups) + ": must be positive");
    if ((*w)[0] % groups) {
      broken(ErrorCode::kShapeMismatch, "weight " + list_str(*w) + ": its dim 0 (" + std::to_string((*w)[0]) + ") is not divisible by groups=" + std::to_string(groups));
    }
    Ints output_padding(k, 0);
    if (transposed) {
      output_padding = spatial("output_padding", k, Ints(k, 0));
      for (std::size_t i = 0; i < k; ++i) {
        if (output_padding[i] < 0 || output_padding[i] >= std::max(stride[i], dilation[i])) {
          broken(ErrorCode::kInvalidArgument, "attribute 'output_padding' " + list_str(output_padding) + ": each must be smaller than stride or dilation");
        }
      }
    }
    auto x = input_shape();
    if (!x) return;
    if (x->size() != k + 2 && x->size() != k + 1) {
      broken(ErrorCode::kShapeMismatch, "input " + list_str(*x) + " for a " + std::to_string(k) + "D convolution with weight " + list_str(*w));
    }
    const std::size_t channel_dim = x->size() - k - 1;
    const i64 channels = (*x)[channel_dim];
    const i64 expected = transposed ? (*w)[0] : (*w)[1] * groups;
    if (channels != expected) {
      broken(ErrorCode::kShapeMismatch, "input " + list_str(*x) + " has " + std::to_string(channels) + " channels; weight " + list_str(*w) +
                                            " with groups=" + std::to_string(groups) + " expects " + std::to_string(expected));
    }
    for (std::size_t i = 0; i < k; ++i) {
      const i64 in = (*x)[channel_dim + 1 + i], kernel = (*w)[2 + i];
      if (transposed) {
        const i64 out = shape_rules::transposed_output(in, kernel, stride[i], padding[i], dilation[i], output_padding[i]);
        if (out <= 0) broken(ErrorCode::kShapeMismatch, "input " + list_str(*x) + " gives an output size of " + std::to_string(out) + " in spatial dim " + std::to_string(i));
      } else if (!named_padding && !shape_rules::window_output(in, kernel, stride[i], padding[i], dilation[i])) {
        // a * b + c for the message, without overflowing at hostile sizes (fuzz_backends, under UBSan).
        const auto sum = [](i64 a, i64 b, i64 c) {
          i64 r = 0;
          return __builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r) ? std::string("past int64") : std::to_string(r);
        };
        broken(ErrorCode::kShapeMismatch, "input " + list_str(*x) + ": the dilated kernel (" + sum(dilation[i], kernel - 1, 1) +
                                              ") is larger than the padded input (" + sum(2, padding[i], in) + ") in spatial dim " + std::to_string(i));
      }
    }
  }

  void pooling(std::size_t k, bool max) const {
    const Ints kernel = spatial("kernel_size", k, Ints{});
    if (kernel.empty()) return;  // computed at run time
    positive("kernel_size", kernel);
    const Ints stride = spatial("stride", k, kernel);
    positive("stride", stride);
    const Ints padding = spatial("padding", k, Ints(k, 0));
    not_negative("padding", padding);
    const Ints dilation = max ? spatial("dilation", k, Ints(k, 1)) : Ints(k, 1);
    positive("dilation", dilation);
    for (std::size_t i = 0; i < k; ++i) {
      if (!shape_rules::pool_padding_fits(kernel[i], padding[i])) {
        broken(ErrorCode::kInvalidArgument, "attribute 'padding' " + list_str(padding) + ": must be at most half of the kernel size " + list_str(kernel));
      }
    }
    auto x = input_shape();
    if (!x || x->size() < k + 1) return;
    for (std::size_t i = 0; i < k; ++i) {
      const i64 in = (*x)[x->size() - k + i];
      if (!shape_rules::window_output(in, kernel[i], stride[i], padding[i], dilation[i])) {
        broken(ErrorCode::kShapeMismatch, "input " + list_str(*x) + ": the pooling window " + list_str(kernel) + " is larger than the padded input in spatial dim " + std::to_string(i));
      }
    }
  }

  void resize() const {
    if (auto size = ints("output_size")) positive("output_size", *size);
    if (const AttributeValue* a = n_.attributes.find("scale_factors")) {
      std::vector<double> f;
      if (auto* d = std::get_if<std::vector<double>>(a)) f = *d;
      if (auto* d = std::get_if<double>(a)) f = {*d};
      for (double x : f) {
        if (!(x > 0) || !std::isfinite(x)) broken(ErrorCode::kInvalidArgument, "attribute 'scale_factors': each must be positive and finite");
      }
    }
    for (const char* name : {"scales", "scales_d", "scales_h", "scales_w"}) {
      if (auto s = n_.attributes.find(name); s && std::holds_alternative<double>(*s)) {
        const double x = std::get<double>(*s);
        if (!(x > 0) || !std::isfinite(x)) broken(ErrorCode::kInvalidArgument, "attribute '" + std::string(name) + "': must be positive and finite");
      }
    }
  }

  void run(const std::string& base, const std::optional<CanonicalOp>& canonical) const {
    const std::string c = canonical ? canonical->name : "";
    if (const AttributeValue* fused = n_.attributes.find(kFusedActivation)) {
      const std::string* name = std::get_if<std::string>(fused);
      if (!name || !is_fusible_activation(*name)) {
        std::string known;
        for (std::string_view k : kFusibleActivations) known += (known.empty() ? "" : ", ") + std::string(k);
        broken(ErrorCode::kSchema, "attribute '" + std::string(kFusedActivation) + "' " + (name ? "'" + *name + "'" : std::string("is not a string")) +
                                       ": not an activation that fuses (" + known + ")");
      }
    }
    if (c == "conv" || c == "conv_transpose") return convolution(c == "conv_transpose");
    if (c == "max_pool" || c == "avg_pool") {
      const std::size_t k = named_spatial_rank(base).value_or(2);
      return pooling(k, c == "max_pool");
    }
    if (c == "upsample") return resize();
    if (c == "slice") {
      if (auto step = int_of("step"); step && *step <= 0) broken(ErrorCode::kInvalidArgument, "attribute 'step' " + std::to_string(*step) + ": slice step must be positive");
    }
    auto x = input_shape();
    if (!x) return;
    const std::size_t rank = x->size();
    if (c == "permute" && base.rfind("permute", 0) == 0) {
      auto dims = ints("dims");
      if (!dims) return;
      if (dims->size() != rank) broken(ErrorCode::kSchema, "attribute 'dims' " + list_str(*dims) + " for a tensor of rank " + std::to_string(rank));
      std::vector<bool> seen(rank, false);
      for (i64 d : *dims) {
        const i64 k = dim_in_range("dims", d, rank);
        if (seen[static_cast<std::size_t>(k)]) broken(ErrorCode::kInvalidArgument, "attribute 'dims' " + list_str(*dims) + ": each dim must appear once");
        seen[static_cast<std::size_t>(k)] = true;
      }
    }
    if (c == "softmax" || c == "log_softmax" || c == "select") {
      if (auto d = int_of("dim")) dim_in_range("dim", *d, rank);
    }
    if (c == "select") {
      if (rank == 0) broken(ErrorCode::kShapeMismatch, "select from a 0-d tensor");
      const i64 size = (*x)[static_cast<std::size_t>(dim_in_range("dim", int_of("dim").value_or(0), rank))];
      if (auto index = int_of("index"); index && (*index < -size || *index >= size)) {
        broken(ErrorCode::kOutOfRange, "attribute 'index' " + std::to_string(*index) + " is out of range for a dim of " + std::to_string(size));
      }
    }
    if (c == "transpose" && base != "t") {
      if (auto d = int_of("dim0")) dim_in_range("dim0", *d, rank);
      if (auto d = int_of("dim1")) dim_in_range("dim1", *d, rank);
    }
    if (c == "flatten") {
      if (auto d = int_of("start_dim")) dim_in_range("start_dim", *d, rank);
      if (auto d = int_of("end_dim")) dim_in_range("end_dim", *d, rank);
    }
    if (c == "pad") {
      auto pad = ints("pad");
      if (pad && (pad->size() % 2 || pad->size() > 2 * rank)) {
        broken(ErrorCode::kSchema, "attribute 'pad' " + list_str(*pad) + ": pairs for at most the " + std::to_string(rank) + " dims of the input");
      }
    }
  }

 private:
  const Graph& g_;
  const Node& n_;
};

}  // namespace

void validate_attributes(const Graph& graph) {
  for (NodeId id : graph.nodes()) {
    const Node& n = graph.node(id);
    std::string base(op_base(n.op));
    if (!base.empty() && base.back() == '_' && base.size() > 1 && base[base.size() - 2] != '_') base.pop_back();
    NodeCheck(graph, n).run(base, canonical_op(n));
  }
}

}  // namespace tracegraph
