// Random values (lower/random.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

// Random ops draw from a generator of ours (not torch's): the distributions
// are checked, new values come at every run, and randperm is a permutation.
TEST(XnnpackRandom, DrawsTheDistributionsAnewAtEachRun) {
  Builder b;
  const ValueId like = b.input({5, 7});
  const ValueId uniform = b.op("rand", "", {}, attrs({{"size", Ints{1000, 3}}}));
  const ValueId normal = b.op("randn", "", {}, attrs({{"size", Ints{4001}}}));
  const ValueId perm = b.op("randperm", "", {}, attrs({{"n", std::int64_t{257}}}));
  b.g.set_value_type(perm, DType::kInt64, symbolic({257}));
  const ValueId ints = b.op("randint", "low", {}, attrs({{"low", std::int64_t{-3}}, {"high", std::int64_t{10}}, {"size", Ints{2000}}}));
  b.g.set_value_type(ints, DType::kInt64, symbolic({2000}));
  const ValueId noise = b.op("randn_like", "", {{"self", like}});
  b.g.set_outputs({uniform, normal, perm, ints, noise});
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Graph graph = b.g;
    TracedGraph g(std::move(graph), std::nullopt, std::nullopt, make_backend({threads}));
    g.finalize();
    const auto first = g.run(b.inputs), second = g.run(b.inputs);
    const at::Tensor u = native::to_aten(first[0]), n = native::to_aten(first[1]), p = native::to_aten(first[2]), k = native::to_aten(first[3]);
    EXPECT_EQ(u.sizes(), at::IntArrayRef({1000, 3}));
    EXPECT_GE(u.min().item<float>(), 0.0f);
    EXPECT_LT(u.max().item<float>(), 1.0f);
    EXPECT_NEAR(u.mean().item<float>(), 0.5f, 0.02f);  // 4 sigma of 3000 draws
    EXPECT_NEAR(n.mean().item<float>(), 0.0f, 0.07f);
    EXPECT_NEAR(n.std().item<float>(), 1.0f, 0.05f);
    EXPECT_EQ(p.scalar_type(), at::kLong);
    EXPECT_TRUE(std::get<0>(p.sort()).equal(at::arange(257, at::kLong)));
    EXPECT_FALSE(p.equal(at::arange(257, at::kLong)));
    EXPECT_EQ(k.min().item<std::int64_t>(), -3);
    EXPECT_EQ(k.max().item<std::int64_t>(), 9);
    EXPECT_EQ(std::get<0>(at::_unique(k)).numel(), 13);
    EXPECT_EQ(first[4].shape(), (Shape{5, 7}));
    for (std::size_t i = 0; i < first.size(); ++i) EXPECT_FALSE(native::to_aten(first[i]).equal(native::to_aten(second[i]))) << "output " << i << " drawn again";
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
