// trace(): record a C++ callable into a TracedGraph.
//
// The callable takes symbolic tensors arranged like the example inputs
// (tensors inside tuples, vectors, string-keyed maps, nested) and returns
// symbolic tensors arranged the same way; every op it calls on them becomes a
// node, with its dtype and shape inferred as it is recorded. Misuse (shapes
// that do not fit, a wrong dtype) is an Error naming the op, the shapes and
// the file and line of the call that made it.
//
// The nodes are recorded with LibTorch's op names and arguments (aten::conv2d,
// ...), so every backend that runs graphs read from TorchScript runs these.
//
//   auto g = tracegraph::trace([&](const SymbolicTensor& x) {
//     return conv2d(x, weight, bias, {1, 1}, {1, 1}).relu();
//   }, example);   // in_spec ((*,), {}), out_spec *
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tracegraph/traced_graph.h"

namespace tracegraph {

// Where a traced op was called from; filled in at the call site.
struct CallSite {
  const char* file;
  int line;
  CallSite(const char* f = __builtin_FILE(), int l = __builtin_LINE()) : file(f), line(l) {}
};

class Tracer;

class SymbolicTensor {
 public:
  SymbolicTensor() = default;
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t dim() const { return static_cast<std::int64_t>(shape_.size()); }
  ValueId value() const { return value_; }

  SymbolicTensor relu(CallSite at = {}) const;
  SymbolicTensor relu6(CallSite at = {}) const;
  SymbolicTensor sigmoid(CallSite at = {}) const;
  SymbolicTensor tanh(CallSite at = {}) const;
  SymbolicTensor hardswish(CallSite at = {}) const;
  SymbolicTensor silu(CallSite at = {}) const;
  SymbolicTensor clamp(std::optional<double> min, std::optional<double> max, CallSite at = {}) const;
  SymbolicTensor softmax(std::int64_t dim, CallSite at = {}) const;
  SymbolicTensor log_softmax(std::int64_t dim, CallSite at = {}) const;
  SymbolicTensor matmul(const SymbolicTensor& other, CallSite at = {}) const;
  SymbolicTensor reshape(Shape shape, CallSite at = {}) const;  // one dim may be -1
  SymbolicTensor permute(std::vector<std::int64_t> dims, CallSite at = {}) const;
  SymbolicTensor transpose(std::int64_t dim0, std::int64_t dim1, CallSite at = {}) const;
  SymbolicTensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1, CallSite at = {}) const;
  // Python's x[..., start:end:step] along `dim`; bounds are clamped as Python clamps them.
  SymbolicTensor slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1, CallSite at = {}) const;
  SymbolicTensor sum(std::vector<std::int64_t> dims, bool keepdim = false, CallSite at = {}) const;
  SymbolicTensor mean(std::vector<std::int64_t> dims, bool keepdim = false, CallSite at = {}) const;

 private:
  friend class Tracer;
  friend struct SymbolicAccess;
  Tracer* tracer_ = nullptr;
  ValueId value_;
  DType dtype_ = DType::kFloat32;
  Shape shape_;
};

// The right-hand side of a binary operator, carrying the caller's line.
template <class T>
struct Operand {
  T value;
  CallSite at;
  Operand(T v, CallSite where = {}) : value(std::move(v)), at(where) {}
};

SymbolicTensor operator+(const SymbolicTensor& a, Operand<const SymbolicTensor&> b);
SymbolicTensor operator-(const SymbolicTensor& a, Operand<const SymbolicTensor&> b);
SymbolicTensor operator*(const SymbolicTensor& a, Operand<const SymbolicTensor&> b);
SymbolicTensor operator/(const SymbolicTensor& a, Operand<const SymbolicTensor&> b);
SymbolicTensor operator+(const SymbolicTensor& a, Operand<double> b);
SymbolicTensor operator-(const SymbolicTensor& a, Operand<double> b);
SymbolicTensor operator*(const SymbolicTensor& a, Operand<double> b);
SymbolicTensor operator/(const SymbolicTensor& a, Operand<double> b);

// Weights are ordinary tensors; they become constants of the graph.
SymbolicTensor conv2d(const SymbolicTensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                      std::vector<std::int64_t> stride = {1, 1}, std::vector<std::int64_t> padding = {0, 0},
                      std::vector<std::int64_t> dilation = {1, 1}, std::int64_t groups = 1, CallSite at = {});
SymbolicTensor conv3d(const SymbolicTensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                      std::vector<std::int64_t> stride = {1, 1, 1}, std::vector<std::int64_t> padding = {0, 0, 0},
                      std::vector<std::int64_t> dilation = {1, 1, 1}, std::int64_t groups = 1, CallSite at = {});
SymbolicTensor linear(const SymbolicTensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt, CallSite at = {});
SymbolicTensor max_pool2d(const SymbolicTensor& x, std::vector<std::int64_t> kernel, std::vector<std::int64_t> stride = {},
                          std::vector<std::int64_t> padding = {0, 0}, CallSite at = {});
SymbolicTensor avg_pool2d(const SymbolicTensor& x, std::vector<std::int64_t> kernel, std::vector<std::int64_t> stride = {},
                          std::vector<std::int64_t> padding = {0, 0}, CallSite at = {});
SymbolicTensor cat(const std::vector<SymbolicTensor>& tensors, std::int64_t dim, CallSite at = {});

// ---- structures: what the callable takes and returns ------------------------

namespace detail {

template <class T>
struct Symbolic;
template <>
struct Symbolic<Tensor> {
  using type = SymbolicTensor;
};
template <class... Ts>
struct Symbolic<std::tuple<Ts...>> {
  using type = std::tuple<typename Symbolic<Ts>::type...>;
};
template <class A, class B>
struct Symbolic<std::pair<A, B>> {
  using type = std::pair<typename Symbolic<A>::type, typename Symbolic<B>::type>;
};
template <class T>
struct Symbolic<std::vector<T>> {
  using type = std::vector<typename Symbolic<T>::type>;
};
template <class T>
struct Symbolic<std::map<std::string, T>> {
  using type = std::map<std::string, typename Symbolic<T>::type>;
};

}  // namespace detail

// Records into one graph; trace() makes one and hands it the callable.
class Tracer {
 public:
  Tracer();
  SymbolicTensor input(const Tensor& example) { return input(example.dtype(), example.shape()); }
  SymbolicTensor input(DType dtype, const Shape& shape, std::string name = {});
  SymbolicTensor constant(const Tensor& data, const std::string& hint);
  // Records a node of op `op` (overload `overload`) whose tensor inputs fill
  // `arg_names`; returns its output, of dtype and shape given.
  SymbolicTensor record(const std::string& op, const std::string& overload, const std::vector<SymbolicTensor>& inputs,
                        const std::vector<std::string>& arg_names, Attributes attrs, DType dtype, Shape shape);
  [[noreturn]] void misuse(const std::string& op, const std::string& what, const CallSite& at) const;
  Graph& graph() { return graph_; }

 private:
  Graph graph_;
};

namespace detail {

template <class T>
struct IsTupleLike : std::false_type {};
template <class... Ts>
struct IsTupleLike<std::tuple<Ts...>> : std::true_type {};
template <class A, class B>
struct IsTupleLike<std::pair<A, B>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsMap : std::false_type {};
template <class T>
struct IsMap<std::map<std::string, T>> : std::true_type {};

template <class T>
typename Symbolic<T>::type make_inputs(Tracer& tracer, const T& example, TreeSpec& spec) {
  if constexpr (std::is_same_v<T, Tensor>) {
    spec = TreeSpec::leaf();
    return tracer.input(example);
  } else if constexpr (IsTupleLike<T>::value) {
    std::vector<TreeSpec> children;
    typename Symbolic<T>::type out = std::apply(
        [&](const auto&... e) {
          return typename Symbolic<T>::type{[&](const auto& x) {
            children.emplace_back();
            return make_inputs(tracer, x, children.back());
          }(e)...};
        },
        example);
    spec = TreeSpec::tuple(std::move(children));
    return out;
  } else if constexpr (IsVector<T>::value) {
    typename Symbolic<T>::type out;
    std::vector<TreeSpec> children(example.size());
    for (std::size_t i = 0; i < example.size(); ++i) out.push_back(make_inputs(tracer, example[i], children[i]));
    spec = TreeSpec::list(std::move(children));
    return out;
  } else {
    static_assert(IsMap<T>::value, "trace: inputs are tensors inside tuples, pairs, vectors and std::map<std::string, ...>");
    typename Symbolic<T>::type out;
    std::vector<std::pair<std::string, TreeSpec>> items;
    for (const auto& [k, v] : example) {
      items.emplace_back(k, TreeSpec());
      out.emplace(k, make_inputs(tracer, v, items.back().second));
    }
    spec = TreeSpec::dict(std::move(items));
    return out;
  }
}

template <class R>
TreeSpec collect_outputs(Graph& g, const R& result) {
  if constexpr (std::is_same_v<R, SymbolicTensor>) {
    g.add_output(result.value());
    return TreeSpec::leaf();
  } else if constexpr (IsTupleLike<R>::value) {
    std::vector<TreeSpec> children;
    std::apply([&](const auto&... e) { (children.push_back(collect_outputs(g, e)), ...); }, result);
    return TreeSpec::tuple(std::move(children));
  } else if constexpr (IsVector<R>::value) {
    std::vector<TreeSpec> children;
    for (const auto& e : result) children.push_back(collect_outputs(g, e));
    return TreeSpec::list(std::move(children));
  } else {
    static_assert(IsMap<R>::value, "trace: the callable returns symbolic tensors inside tuples, pairs, vectors and maps");
    std::vector<std::pair<std::string, TreeSpec>> items;
    for (const auto& [k, v] : result) items.emplace_back(k, collect_outputs(g, v));
    return TreeSpec::dict(std::move(items));
  }
}

}  // namespace detail

// Records fn(symbolic inputs like `examples`...) into a TracedGraph whose
// in_spec is ((examples...), {}) and out_spec the structure fn returns. The
// result has the default backend (LibTorch natively; see set_default_backend).
template <class F, class... Examples>
TracedGraph trace(F&& fn, const Examples&... examples) {
  Tracer tracer;
  std::vector<TreeSpec> args;
  // A braced list evaluates left to right: inputs are numbered in argument order.
  std::tuple<typename detail::Symbolic<Examples>::type...> symbolic{[&](const auto& e) {
    args.emplace_back();
    return detail::make_inputs(tracer, e, args.back());
  }(examples)...};
  const auto result = std::apply(fn, symbolic);
  TreeSpec out_spec = detail::collect_outputs(tracer.graph(), result);
  TreeSpec in_spec = TreeSpec::tuple({TreeSpec::tuple(std::move(args)), TreeSpec::dict({})});
  return TracedGraph(std::move(tracer.graph()), std::move(in_spec), std::move(out_spec));
}

// One input of a signature: a name, a dtype and a shape.
struct TensorSignature {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
};

// Records fn(std::vector<SymbolicTensor>) for inputs known only by signature;
// the result's in_spec is empty.
template <class F>
TracedGraph trace_signature(F&& fn, const std::vector<TensorSignature>& signature) {
  Tracer tracer;
  std::vector<SymbolicTensor> inputs;
  for (const auto& s : signature) inputs.push_back(tracer.input(s.dtype, s.shape, s.name));
  const auto result = fn(inputs);
  TreeSpec out_spec = detail::collect_outputs(tracer.graph(), result);
  return TracedGraph(std::move(tracer.graph()), std::nullopt, std::move(out_spec));
}

}  // namespace tracegraph
