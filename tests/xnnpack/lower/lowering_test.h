// What the tests of the lowerings (one file per op family, as
// xnnpack/src/lower/) share: graphs built op by op the way the TorchScript
// reader writes them, each run on the LibTorch backend and on XNNPACK. Each
// family's file adds its cases to Ops/XnnpackOpTest (one op at a time, with
// the geometry the test models do not reach: strides, padding, dilation and
// groups in 3D, overlapping transposed convolutions, concatenations of more
// than five inputs, strided slices, resizes to a size, layout changes), each
// against LibTorch at 1 thread and at 3 (the copy kernels' slices split
// unevenly).
#pragma once

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <array>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "native/test_models.h"
#include "test_util.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/op_table.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"

namespace tracegraph::xnnpack::lowering_test {

using tracegraph::testing::max_relative_error;

// Builds graphs the way the TorchScript reader writes them: aten op names,
// the overload and arg_names attributes, constant arguments as attributes.
class Builder {
 public:
  ValueId input(Shape shape) {
    const ValueId v = g.add_input("x" + std::to_string(inputs.size()), DType::kFloat32, symbolic(shape));
    inputs.push_back(native::from_aten(at::randn(at::IntArrayRef(shape), at::TensorOptions().dtype(at::kFloat))));
    return v;
  }
  // An input of another dtype than float32 (token ids, masks), with the values given.
  ValueId typed_input(const at::Tensor& values) {
    const Tensor t = native::from_aten(values);
    const ValueId v = g.add_input("x" + std::to_string(inputs.size()), t.dtype(), symbolic(t.shape()));
    inputs.push_back(t);
    return v;
  }
  ValueId constant(Shape shape, double scale = 0.3) {
    return g.add_constant("c" + std::to_string(counter++), native::from_aten(at::randn(at::IntArrayRef(shape)) * scale));
  }
  ValueId positive_constant(Shape shape) {
    return g.add_constant("c" + std::to_string(counter++), native::from_aten(at::rand(at::IntArrayRef(shape)) + 0.5));
  }
  ValueId op(const std::string& name, const std::string& overload, std::vector<std::pair<std::string, ValueId>> args,
             Attributes attrs = {}) {
    std::vector<std::string> names;
    std::vector<ValueId> ins;
    for (auto& [n, v] : args) names.push_back(n), ins.push_back(v);
    attrs.set(std::string(kArgNamesAttribute), names);
    if (!overload.empty()) attrs.set(std::string(kOverloadAttribute), overload);
    const NodeId id = g.add_node("aten::" + name, ins, {NewValue{}}, std::move(attrs), name + "_" + std::to_string(counter++));
    return g.node(id).outputs[0];
  }
  // A node of `outputs` outputs (unbind, split, native_layer_norm).
  std::vector<ValueId> ops(const std::string& name, std::vector<std::pair<std::string, ValueId>> args, Attributes attrs, std::size_t outputs) {
    std::vector<std::string> names;
    std::vector<ValueId> ins;
    for (auto& [n, v] : args) names.push_back(n), ins.push_back(v);
    attrs.set(std::string(kArgNamesAttribute), names);
    const NodeId id = g.add_node("aten::" + name, ins, std::vector<NewValue>(outputs), std::move(attrs), name + "_" + std::to_string(counter++));
    return g.node(id).outputs;
  }
  Graph g;
  std::vector<Tensor> inputs;
  int counter = 0;
};

inline Attributes attrs(std::initializer_list<std::pair<std::string, AttributeValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}
using Ints = std::vector<std::int64_t>;

struct OpCase {
  std::string name;
  std::function<void(Builder&)> build;  // adds nodes and sets the outputs
};
inline void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }
// The case's name as its test's (Ops/XnnpackOpTest.MatchesLibTorch/<name>).
inline std::string op_case_name(const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; }

// Runs b's graph on the LibTorch backend, then on XNNPACK at each of
// `threads`: same(got, want) for each output.
void against_libtorch(const Builder& b, std::initializer_list<int> threads, const std::function<void(const Tensor&, const Tensor&)>& same);

// Builds the case's graph and checks each output against LibTorch's at 1
// and 3 threads (lowering_test.cpp). Each family's file instantiates it with
// its cases: INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ...).
class XnnpackOpTest : public ::testing::TestWithParam<OpCase> {};

inline Attributes conv_attrs(std::size_t rank, std::int64_t stride, std::int64_t padding) {
  return attrs({{"stride", Ints(rank, stride)}, {"padding", Ints(rank, padding)}, {"dilation", Ints(rank, 1)}, {"groups", std::int64_t{1}}});
}

// A graph on LibTorch (the reference) and on XNNPACK's direct convolutions
// with profiling, both finalized.
struct AgainstLibTorch {
  AgainstLibTorch(const Graph& graph, int threads) {
    auto owned = std::make_unique<XnnpackBackend>(Options{threads, true, 0, ConvAlgorithm::kDirect});
    backend = owned.get();
    reference.emplace(Graph(graph), std::nullopt, std::nullopt, native::make_libtorch_backend());
    xnnpack.emplace(Graph(graph), std::nullopt, std::nullopt, std::move(owned));
    reference->finalize();
    xnnpack->finalize();
  }
  // Runs both; checks the output's shape and values within 1e-5.
  void run_and_check(const std::vector<Tensor>& inputs, const std::string& what = "") {
    const Tensor want = reference->run(inputs).at(0), got = xnnpack->run(inputs).at(0);
    EXPECT_EQ(got.shape(), want.shape()) << what;
    EXPECT_LE(max_relative_error(got, want), 1e-5) << what;
  }
  std::optional<TracedGraph> reference, xnnpack;
  const XnnpackBackend* backend = nullptr;
};

// Runs the graph `build` makes against LibTorch and returns the profile of
// the node under test (`build`'s output).
NodeTime profile_against_libtorch(const std::function<ValueId(Builder&)>& build, int threads);

}  // namespace tracegraph::xnnpack::lowering_test
