// trace() from C++: structures in and out, shapes inferred as it records,
// misuse reported at the line that made it, and the recorded graph run on
// LibTorch against the same computation written with ATen.
#include "tracegraph/trace.h"

#include <ATen/ATen.h>

#include "test_util.h"
#include "tracegraph/activation.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"

namespace tracegraph {
namespace {

using native::from_aten;
using native::to_aten;

Tensor randn(Shape s) { return from_aten(at::randn(s)); }

TEST(TraceTest, RecordsASmallConvNetAndRunsIt) {
  at::manual_seed(0);
  const Tensor w1 = randn({8, 3, 3, 3}), b1 = randn({8}), w2 = randn({4, 8 * 16 * 16});
  const Tensor x = randn({2, 3, 32, 32});
  TracedGraph g = trace(
      [&](const SymbolicTensor& in) {
        SymbolicTensor h = conv2d(in, w1, b1, {1, 1}, {1, 1}).relu();
        h = max_pool2d(h, {2, 2});
        return linear(h.flatten(1), w2).softmax(1);
      },
      x);
  EXPECT_EQ(g.in_spec()->str(), "((*,), {})");
  EXPECT_EQ(g.out_spec().str(), "*");
  const Value& out = g.graph().value(g.graph().outputs()[0]);
  EXPECT_EQ(out.shape, symbolic({2, 4}));
  EXPECT_EQ(output_activation(g.graph())[0].str(), "softmax(dim=1)");
  // Natively the trace finalizes as it is: LibTorch is the default backend.
  ASSERT_NE(g.backend(), nullptr);
  EXPECT_EQ(g.backend()->name(), "libtorch");
  g.finalize();
  const at::Tensor got = to_aten(g.run({x})[0]);
  at::Tensor ref = at::relu(at::conv2d(to_aten(x), to_aten(w1), to_aten(b1), 1, 1));
  ref = at::softmax(at::linear(at::max_pool2d(ref, {2, 2}).flatten(1), to_aten(w2)), 1);
  EXPECT_TRUE(at::allclose(got, ref, 1e-5, 1e-6));
}

TEST(TraceTest, StructuredInputsAndOutputs) {
  using In = std::tuple<Tensor, std::vector<Tensor>, std::map<std::string, Tensor>>;
  const In example{randn({2, 3}), {randn({2, 3}), randn({2, 3})}, {{"scale", randn({1, 3})}}};
  TracedGraph g = trace(
      [](const auto& in) {
        const auto& [a, list, named] = in;
        SymbolicTensor s = a + list[0] * list[1];
        std::map<std::string, SymbolicTensor> out{{"scaled", s * named.at("scale")}, {"sum", s.sum({1})}};
        return std::make_tuple(out, s.sigmoid());
      },
      example);
  EXPECT_EQ(g.in_spec()->str(), "(((*, [*, *], {'scale': *}),), {})");
  EXPECT_EQ(g.out_spec().str(), "({'scaled': *, 'sum': *}, *)");
  EXPECT_EQ(g.input_names().size(), 4u);
  g.set_backend(native::make_libtorch_backend());
  g.finalize();
  using T = Tree<Tensor>;
  const auto& [a, list, named] = example;
  T args = T::tuple({T::tuple({T::tuple({T(a), T::list({T(list[0]), T(list[1])}), T::dict({{"scale", T(named.at("scale"))}})})}), T::dict({})});
  T out = g(args);
  const at::Tensor s = to_aten(a) + to_aten(list[0]) * to_aten(list[1]);
  EXPECT_TRUE(at::allclose(to_aten(out.children()[0].at("scaled").leaf()), s * to_aten(named.at("scale"))));
  EXPECT_TRUE(at::allclose(to_aten(out.children()[0].at("sum").leaf()), s.sum(1)));
  EXPECT_TRUE(at::allclose(to_aten(out.children()[1].leaf()), s.sigmoid()));
}

TEST(TraceTest, ShapesAreInferredForEveryOp) {
  const Tensor w3 = randn({2, 1, 3, 3, 3});
  TracedGraph g = trace(
      [&](const SymbolicTensor& v, const SymbolicTensor& m) {
        SymbolicTensor c = conv3d(v, w3);                    // [1, 2, 6, 6, 6]
        SymbolicTensor p = c.permute({0, 2, 3, 4, 1});       // [1, 6, 6, 6, 2]
        SymbolicTensor r = p.reshape({-1, 2});               // [216, 2]
        SymbolicTensor mm = r.matmul(m);                     // [216, 5]
        SymbolicTensor sl = mm.slice(0, 10, 1000, 3);        // [69, 5]
        SymbolicTensor t = sl.transpose(0, 1).mean({1}, true);  // [5, 1]
        return std::make_tuple(cat({t, t}, 1), sl.clamp(0.0, 1.0), (mm - 1.0).log_softmax(-1));
      },
      randn({1, 1, 8, 8, 8}), randn({2, 5}));
  const auto& outs = g.graph().outputs();
  EXPECT_EQ(g.graph().value(outs[0]).shape, symbolic({5, 2}));
  EXPECT_EQ(g.graph().value(outs[1]).shape, symbolic({69, 5}));
  EXPECT_EQ(g.graph().value(outs[2]).shape, symbolic({216, 5}));
  g.set_backend(native::make_libtorch_backend());
  g.finalize();
  const auto got = g.run(std::vector<Tensor>{randn({1, 1, 8, 8, 8}), randn({2, 5})});
  EXPECT_EQ(got[0].shape(), (Shape{5, 2}));
  EXPECT_EQ(got[1].shape(), (Shape{69, 5}));
}

TEST(TraceTest, MisuseIsReportedAtTheLineThatMadeIt) {
  const Tensor w = randn({4, 3, 3, 3});
  // (Outside the macro: a macro's arguments all sit on the macro's first line.)
  const int line = __LINE__ + 2;
  auto bad_conv = [&](const SymbolicTensor& x) {
    return conv2d(x, w);  // x has 5 channels
  };
  EXPECT_TG_ERROR(trace(bad_conv, randn({1, 5, 8, 8})), ErrorCode::kShapeMismatch,
                  "aten::conv2d at trace_test.cpp:" + std::to_string(line) + ": input has 5 channels");
  const int add_line = __LINE__ + 1;
  EXPECT_TG_ERROR(trace([](const SymbolicTensor& a, const SymbolicTensor& b) { return a + b; }, randn({2, 3}), randn({4, 3})),
                  ErrorCode::kShapeMismatch, "aten::add at trace_test.cpp:" + std::to_string(add_line) + ": shapes [2, 3] and [4, 3] do not broadcast");
  EXPECT_TG_ERROR(trace([](const SymbolicTensor& a) { return a.reshape({7, -1}); }, randn({2, 3})), ErrorCode::kShapeMismatch,
                  "[2, 3] cannot be viewed as [7, -1]");
  EXPECT_TG_ERROR(trace([](const SymbolicTensor& a) { return a.sigmoid(); }, Tensor::zeros(DType::kInt64, {2})), ErrorCode::kShapeMismatch,
                  "needs a floating-point tensor, given int64");
  EXPECT_TG_ERROR(trace([](const SymbolicTensor& a, const SymbolicTensor& b) { return a.matmul(b); }, randn({2, 3}), randn({4, 5})),
                  ErrorCode::kShapeMismatch, "inner dims differ");
}

TEST(TraceTest, ASignatureAloneGivesNoInSpec) {
  TracedGraph g = trace_signature([](const std::vector<SymbolicTensor>& in) { return (in[0] * 2.0).tanh(); },
                                  {{"image", DType::kFloat32, {1, 3, 4, 4}}});
  EXPECT_FALSE(g.in_spec().has_value());
  EXPECT_EQ(g.input_names(), std::vector<std::string>{"image"});
  g.set_backend(native::make_libtorch_backend());
  g.finalize();
  const Tensor x = randn({1, 3, 4, 4});
  EXPECT_TRUE(at::allclose(to_aten(g.run({x})[0]), (to_aten(x) * 2.0).tanh()));
}

TEST(TraceTest, TheOptimizerFusesATracedConvAndActivation) {
  const Tensor w = randn({4, 3, 1, 1});
  TracedGraph g = trace([&](const SymbolicTensor& x) { return conv2d(x, w).relu6() * 1.0; }, randn({1, 3, 4, 4}));
  const OptimizeReport report = g.optimize();
  EXPECT_EQ(g.graph().num_nodes(), 1u) << report.table();
  EXPECT_EQ(output_activation(g.graph())[0].str(), "clip(min=0, max=6)");
}

}  // namespace
}  // namespace tracegraph
