// Reads by index (lower/index.cpp): index with Nones and broadcast indices,
// index_select, where; counts and values only the run knows.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> index_cases() {
  std::vector<OpCase> out;
  // Indices and masks (held as floats, exact): each against LibTorch's int64 and bool.
  out.push_back({"index_with_none_and_broadcast_indices", [](Builder& b) {
    const ValueId x = b.input({4, 5, 3});
    const ValueId rows = b.g.add_constant("rows", native::from_aten(at::tensor({3, 0, -1}, at::kLong).view({3, 1})));
    const ValueId cols = b.g.add_constant("cols", native::from_aten(at::tensor({2, 0}, at::kLong)));
    Attributes a;
    a.set("indices", std::vector<bool>{false, true, true});
    const ValueId mid = b.op("index", "Tensor", {{"self", x}, {"indices", rows}, {"indices", cols}}, a);  // dims 1, 2: [4, 3, 2]
    Attributes apart;
    apart.set("indices", std::vector<bool>{true, false, true});
    const ValueId first = b.op("index", "Tensor", {{"self", x}, {"indices", rows}, {"indices", cols}}, apart);  // apart: [3, 2, 5]
    b.g.set_outputs({mid, first});
  }});
  out.push_back({"index_select_where_any_and_casts", [](Builder& b) {
    const ValueId x = b.input({3, 6, 2}), y = b.input({3, 6, 2});
    const ValueId picks = b.g.add_constant("picks", native::from_aten(at::tensor({5, 0, 0, 2}, at::kLong)));
    const ValueId sel = b.op("index_select", "", {{"self", x}, {"index", picks}}, attrs({{"dim", std::int64_t{1}}}));
    const ValueId mask = b.op("gt", "Tensor", {{"self", x}, {"other", y}});
    const ValueId w = b.op("where", "self", {{"condition", mask}, {"self", x}, {"other", y}});
    const ValueId any = b.op("to", "dtype", {{"self", b.op("any", "dim", {{"self", mask}}, attrs({{"dim", std::int64_t{2}}, {"keepdim", false}}))}},
                             attrs({{"dtype", std::int64_t{6}}, {"non_blocking", false}, {"copy", false}}));
    const ValueId trunc = b.op("to", "dtype", {{"self", b.op("to", "dtype", {{"self", b.op("mul", "Scalar", {{"self", x}}, attrs({{"other", 3.0}}))}},
                                                          attrs({{"dtype", std::int64_t{4}}, {"non_blocking", false}, {"copy", false}}))}},
                               attrs({{"dtype", std::int64_t{6}}, {"non_blocking", false}, {"copy", false}}));
    b.g.set_outputs({sel, w, any, trunc});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(index_cases()), op_case_name);

// nonzero's count, what a boolean mask selects and item()'s value are known
// only to the run: a run that reads another count or value than the plan's
// plans again. Each run matches LibTorch's, through counts of none, some and
// all, a count seen before, and an integer item() that sizes a slice.
TEST(XnnpackDataDependent, ANewCountOrValuePlansAgainAndMatchesLibTorch) {
  Builder b;
  const ValueId x = b.input({3, 1, 5});
  const ValueId n = b.typed_input(at::scalar_tensor(3, at::kLong));
  auto typed = [&](ValueId v, DType dtype, std::optional<SymbolicShape> shape = std::nullopt) {
    b.g.set_value_type(v, dtype, std::move(shape));
    return v;
  };
  const ValueId mask = typed(b.op("gt", "Scalar", {{"self", x}}, attrs({{"other", 0.25}})), DType::kBool, symbolic({3, 1, 5}));
  const ValueId coordinates = typed(b.op("nonzero", "", {{"self", mask}}), DType::kInt64);
  const ValueId selected = b.op("index", "Tensor", {{"self", x}, {"indices", mask}});
  // A mask over the first dim (rows kept whole), and one over the last behind Nones.
  const ValueId first = b.op("select", "int", {{"self", b.op("select", "int", {{"self", x}}, attrs({{"dim", std::int64_t{2}}, {"index", std::int64_t{0}}}))}},
                             attrs({{"dim", std::int64_t{1}}, {"index", std::int64_t{0}}}));
  const ValueId rows = typed(b.op("lt", "Scalar", {{"self", first}}, attrs({{"other", 0.0}})), DType::kBool, symbolic({3}));
  const ValueId by_rows = b.op("index", "Tensor", {{"self", x}, {"indices", rows}});
  const ValueId last = typed(b.op("gt", "Scalar", {{"self", b.op("select", "int", {{"self", b.op("select", "int", {{"self", x}}, attrs({{"dim", std::int64_t{0}}, {"index", std::int64_t{1}}}))}},
                                                                 attrs({{"dim", std::int64_t{0}}, {"index", std::int64_t{0}}}))}},
                                   attrs({{"other", -0.5}})),
                             DType::kBool, symbolic({5}));
  Attributes behind;
  behind.set("indices", std::vector<bool>{false, false, true});
  const ValueId by_last = b.op("index", "Tensor", {{"self", x}, {"indices", last}}, behind);
  const ValueId peak = typed(b.op("amax", "", {{"self", x}}, attrs({{"dim", Ints{}}, {"keepdim", false}})), DType::kFloat32, symbolic({}));
  const ValueId top = b.op("item", "", {{"self", peak}});
  const ValueId scaled = b.op("mul", "Tensor", {{"self", x}, {"other", top}});
  const ValueId padded = b.op("constant_pad_nd", "", {{"self", x}, {"value", top}}, attrs({{"pad", Ints{1, 2}}}));
  const ValueId head = b.op("slice", "Tensor", {{"self", x}, {"end", b.op("item", "", {{"self", n}})}},
                            attrs({{"dim", std::int64_t{2}}, {"start", std::int64_t{0}}, {"step", std::int64_t{1}}}));
  // A mask the graph leaves untyped (a scripted model read without shapes), broadcast.
  const ValueId untyped = b.op("ge", "Scalar", {{"self", b.op("select", "int", {{"self", x}}, attrs({{"dim", std::int64_t{0}}, {"index", std::int64_t{2}}}))}},
                               attrs({{"other", 0.0}}));
  const ValueId picked = b.op("masked_select", "", {{"self", x}, {"mask", untyped}});
  // x[mask] = x[mask] * 2: one value per position set.
  Attributes put;
  put.set("accumulate", false);
  const ValueId doubled = b.op("index_put", "", {{"self", x}, {"indices", mask}, {"values", b.op("mul", "Scalar", {{"self", selected}}, attrs({{"other", 2.0}}))}}, put);
  // Repeats computed in the graph (the count of each row's kept elements): x's rows
  // repeated that often, directly and as torch.export writes it (indices, then index_select).
  const ValueId per_row = b.op("sum", "dim_IntList", {{"self", mask}}, attrs({{"dim", Ints{1, 2}}, {"keepdim", false}}));
  b.g.set_value_type(per_row, DType::kInt64, symbolic({3}));
  const ValueId rows_repeated = b.op("repeat_interleave", "self_Tensor", {{"self", x}, {"repeats", per_row}}, attrs({{"dim", std::int64_t{0}}}));
  const ValueId which = b.op("repeat_interleave", "Tensor", {{"repeats", per_row}});
  b.g.set_value_type(which, DType::kInt64, std::nullopt);
  const ValueId gathered = b.op("index_select", "", {{"self", x}, {"index", which}}, attrs({{"dim", std::int64_t{0}}}));
  b.g.set_outputs({coordinates, selected, by_rows, by_last, scaled, head, padded, picked, doubled, rows_repeated, which, gathered});

  Graph copy = b.g;
  TracedGraph reference(std::move(copy), std::nullopt, std::nullopt, native::make_libtorch_backend());
  reference.finalize();
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({2}));
  g.finalize();
  const at::Tensor some = native::to_aten(b.inputs[0]);
  const std::vector<std::pair<at::Tensor, std::int64_t>> runs = {
      {some, 3}, {-some.abs() - 1, 0}, {some.abs() + 1, 5}, {some, 3}, {some * -1, 1}};
  for (std::size_t r = 0; r < runs.size(); ++r) {
    SCOPED_TRACE("run " + std::to_string(r));
    const std::vector<Tensor> inputs = {native::from_aten(runs[r].first.contiguous()), Tensor::from_vector<std::int64_t>({runs[r].second}, {})};
    const auto want = reference.run(inputs);
    const auto got = g.run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
      EXPECT_EQ(got[i].dtype(), want[i].dtype()) << "output " << i;
      EXPECT_LE(max_relative_error(got[i], want[i]), 1e-6) << "output " << i;
    }
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
