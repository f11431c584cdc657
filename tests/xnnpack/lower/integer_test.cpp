// int64 tensors (lower/integer.cpp): integer and bool graph inputs, int64
// exact past float32's 2^24, and what is refused rather than rounded.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> integer_cases() {
  std::vector<OpCase> out;
  out.push_back({"integer_and_bool_graph_inputs", [](Builder& b) {
    // Token ids (int64, int32) and a mask (bool) as the caller gives them.
    const ValueId ids = b.typed_input(at::randint(0, 10, {2, 5}, at::kLong));
    const ValueId ids32 = b.typed_input(at::randint(-300, 300, {5}, at::kInt));
    const ValueId mask = b.typed_input(at::rand({2, 5}) > 0.5);
    const ValueId embedded = b.op("embedding", "", {{"weight", b.constant({10, 4})}, {"indices", ids}});
    const ValueId filled = b.op("masked_fill", "Scalar", {{"self", b.input({2, 5})}, {"mask", mask}}, attrs({{"value", -1.0}}));
    b.g.set_outputs({embedded, filled, b.op("mul", "Scalar", {{"self", ids}}, attrs({{"other", std::int64_t{3}}})),
                     b.op("add", "Tensor", {{"self", ids}, {"other", ids32}}, attrs({{"alpha", std::int64_t{1}}})),
                     b.op("logical_not", "", {{"self", mask}}), b.op("cumsum", "", {{"self", ids32}}, attrs({{"dim", std::int64_t{0}}}))});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(integer_cases()), op_case_name);

// int64 tensors are exact past float32's 2^24 (Slot::int64): integer
// inputs through the ops that compute on int64 (arithmetic that wraps around,
// divisions, bitwise ops, comparisons, where, clamp, reductions, cumsum,
// casts) and the layout ops that move them, to int64 outputs and back to
// narrower types, each equal to LibTorch's.
TEST(XnnpackInt64, ExactPast2To24AndEqualToLibTorch) {
  Builder b;
  const std::int64_t big = (std::int64_t{1} << 40) + 3;
  const ValueId ids = b.typed_input(at::tensor({std::int64_t{5}, big, -(std::int64_t{1} << 33) - 1, std::int64_t{16777217}, std::int64_t{-7},
                                                std::int64_t{123456789012}},
                                               at::kLong)
                                        .view({2, 3}));
  const ValueId small = b.typed_input(at::tensor({3, -2, 7}, at::kLong));
  auto typed = [&](ValueId v, DType dtype) {
    b.g.set_value_type(v, dtype, std::nullopt);
    return v;
  };
  auto i64 = [](std::int64_t v) { return AttributeValue(v); };
  const ValueId gt = typed(b.op("gt", "Tensor", {{"self", ids}, {"other", small}}), DType::kBool);
  const ValueId copy = b.op("clone", "", {{"self", ids}});
  const ValueId bumped = b.op("add_", "Tensor", {{"self", copy}, {"other", small}});
  // An op that computes on float32 and writes in place: its result reaches the int64 tensor.
  const ValueId small_copy = b.op("clone", "", {{"self", small}});
  b.op("relu_", "", {{"self", small_copy}});
  std::vector<ValueId> outs = {
      b.op("mul", "Tensor", {{"self", ids}, {"other", small}}),
      b.op("add", "Tensor", {{"self", ids}, {"other", small}}, attrs({{"alpha", i64(2)}})),
      b.op("sub", "Scalar", {{"self", ids}}, attrs({{"other", i64(16777216)}, {"alpha", i64(1)}})),
      b.op("mul", "Scalar", {{"self", ids}}, attrs({{"other", i64(1 << 30)}})),  // wraps around past 2^63, as torch's
      b.op("abs", "", {{"self", b.op("neg", "", {{"self", ids}})}}),
      b.op("floor_divide", "", {{"self", ids}, {"other", small}}),
      b.op("remainder", "Tensor", {{"self", ids}, {"other", small}}),
      b.op("div", "Tensor_mode", {{"self", ids}, {"other", small}}, attrs({{"rounding_mode", std::string("trunc")}})),
      b.op("bitwise_xor", "Tensor", {{"self", ids}, {"other", small}}),
      b.op("maximum", "", {{"self", ids}, {"other", small}}),
      gt,
      typed(b.op("eq", "Scalar", {{"self", ids}}, attrs({{"other", i64(16777217)}})), DType::kBool),
      b.op("where", "self", {{"condition", gt}, {"self", ids}, {"other", small}}),
      b.op("clamp", "", {{"self", ids}}, attrs({{"min", i64(-100)}, {"max", i64(std::int64_t{1} << 35)}})),
      b.op("sum", "dim_IntList", {{"self", ids}}, attrs({{"dim", Ints{1}}, {"keepdim", false}})),
      b.op("sum", "", {{"self", ids}}),
      b.op("cumsum", "", {{"self", ids}}, attrs({{"dim", i64(1)}})),
      b.op("amax", "", {{"self", ids}}, attrs({{"dim", Ints{0}}, {"keepdim", true}})),
      b.op("view", "", {{"self", b.op("permute", "", {{"self", ids}}, attrs({{"dims", Ints{1, 0}}}))}}, attrs({{"size", Ints{6}}})),
      b.op("cat", "", {{"tensors", ids}, {"tensors", b.op("unsqueeze", "", {{"self", small}}, attrs({{"dim", i64(0)}}))}}, attrs({{"dim", i64(0)}})),
      b.op("slice", "Tensor", {{"self", b.op("flip", "", {{"self", ids}}, attrs({{"dims", Ints{-1}}}))}},
           attrs({{"dim", i64(1)}, {"start", i64(1)}, {"end", i64(3)}, {"step", i64(1)}})),
      typed(b.op("to", "dtype", {{"self", ids}}, attrs({{"dtype", i64(3)}})), DType::kInt32),    // wraps to 32 bits
      typed(b.op("to", "dtype", {{"self", ids}}, attrs({{"dtype", i64(6)}})), DType::kFloat32),  // rounds, as torch's
      typed(b.op("add", "Scalar", {{"self", ids}}, attrs({{"other", 0.5}, {"alpha", i64(1)}})), DType::kFloat32),
      bumped,
      ids,  // the clone's update left its source alone
      b.op("add", "Tensor", {{"self", small_copy}, {"other", small}}, attrs({{"alpha", i64(1)}})),
      // size-1 dims broadcast: [2, 1, 3] x [3, 1]
      b.op("mul", "Tensor", {{"self", b.op("view", "", {{"self", ids}}, attrs({{"size", Ints{2, 1, 3}}}))},
                             {"other", b.op("view", "", {{"self", small}}, attrs({{"size", Ints{3, 1}}}))}}),
  };
  b.g.set_outputs(outs);
  against_libtorch(b, {1, 2}, [](const Tensor& got, const Tensor& want) {
    const at::Tensor a = native::to_aten(got), w = native::to_aten(want);
    EXPECT_EQ(a.scalar_type(), w.scalar_type());
    EXPECT_TRUE(a.to(w.scalar_type()).equal(w)) << a << " against LibTorch's " << w;
  });
}

// An int64 constant past 2^24 (a table of ids, hashes) is held as int64:
// exact, and again in the plans for new input shapes.
TEST(XnnpackInt64, ConstantsPast2To24StayExactAcrossPlans) {
  Builder b;
  const ValueId ids = b.typed_input(at::tensor({1, 2, 3}, at::kLong).view({1, 3}));
  b.g.set_value_type(ids, DType::kInt64, std::nullopt);  // any shape
  const at::Tensor table = at::tensor({std::int64_t{1} << 40, -(std::int64_t{1} << 35) - 7, std::int64_t{16777217}}, at::kLong).view({1, 3});
  const ValueId c = b.g.add_constant("table", native::from_aten(table));
  b.g.set_outputs({b.op("add", "Tensor", {{"self", ids}, {"other", c}}, attrs({{"alpha", std::int64_t{1}}}))});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  for (std::int64_t rows : {1, 4, 1}) {
    const at::Tensor in = at::arange(rows * 3, at::kLong).view({rows, 3}) * 1000003;
    const at::Tensor got = native::to_aten(g.run({native::from_aten(in)})[0]);
    EXPECT_TRUE(got.equal(in + table)) << rows << " rows: " << got;
  }
}

// An op that computes on float32 here refuses an int64 input past 2^24 at
// the run, naming the node, the input and the element, rather than give a
// rounded result; the same graph runs on integers float32 holds. An input of
// another dtype than the graph's is refused too.
TEST(XnnpackInt64, OtherOpsRefuseIntegersPast2To24ByName) {
  Builder b;
  const ValueId ids = b.typed_input(at::tensor({3, 7}, at::kLong));
  const ValueId rolled = b.op("roll", "", {{"self", ids}}, attrs({{"shifts", Ints{1}}, {"dims", Ints{0}}}));
  b.g.set_value_type(rolled, DType::kInt64, std::nullopt);
  b.g.set_outputs({rolled});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  auto roll = [&](std::vector<std::int64_t> v) { return native::to_aten(g.run({Tensor::from_vector<std::int64_t>(v, {2})})[0]); };
  EXPECT_TRUE(roll({-(1 << 24), 1 << 24}).equal(at::tensor({1 << 24, -(1 << 24)}, at::kLong)));
  EXPECT_TG_ERROR(g.run({Tensor::from_vector<std::int64_t>({5, (1 << 24) + 1}, {2})}), ErrorCode::kOutOfRange,
                  "(aten::roll): input 'x0' element 1 is 16777217, past 2^24");
  EXPECT_TG_ERROR(g.run({Tensor::from_vector<float>({5, 6}, {2})}), ErrorCode::kDTypeMismatch, "input %x0 must be int64, given float32");
  EXPECT_TRUE(roll({4, -9}).equal(at::tensor({-9, 4}, at::kLong)));
}

// Integers the graph makes from floats (a cast) are held as float32: an
// int64 output computed past 2^24 from them is refused naming the output
// rather than given rounded.
TEST(XnnpackOpErrors, AnIntegerOutputPast2To24IsRefusedNotRounded) {
  Builder b;
  const ValueId x = b.input({2});
  const ValueId ids = b.op("to", "dtype", {{"self", x}}, attrs({{"dtype", std::int64_t{4}}}));
  b.g.set_value_type(ids, DType::kInt64, symbolic({2}));
  const ValueId big = b.op("mul", "Scalar", {{"self", ids}}, attrs({{"other", std::int64_t{3000000}}}));
  b.g.set_value_type(big, DType::kInt64, symbolic({2}));
  b.g.set_outputs({big});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  const Tensor small = Tensor::from_vector<float>({1, -5}, {2});
  EXPECT_TRUE(native::to_aten(g.run({small})[0]).equal(at::tensor({3000000, -15000000}, at::kLong)));
  EXPECT_TG_ERROR(g.run({Tensor::from_vector<float>({2, 6}, {2})}), ErrorCode::kOutOfRange, "element 1 is about 18000000");
  EXPECT_TRUE(native::to_aten(g.run({small})[0]).equal(at::tensor({3000000, -15000000}, at::kLong)));  // and it still runs
}

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
