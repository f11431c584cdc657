// GEMMs in column blocks (lower/gemm.cpp): convolutions and linears whose
// weights outgrow the L2 cache run as XNNPACK operators over blocks of their
// output channels.
#include "xnnpack/lower/lowering_test.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

// Column blocks: convolutions and linears whose weights outgrow the L2 cache
// (over 2 MB), over 32 or more rows, run as XNNPACK operators over blocks of
// their output channels. Each case: its node's blocks in the profile (0: one
// operator), and its output against LibTorch, at 1 and 2 threads.
struct BlockCase {
  std::string name;
  std::function<ValueId(Builder&)> build;  // the node under test's output
  int blocks;
};

void PrintTo(const BlockCase& c, std::ostream* os) { *os << c.name; }

std::vector<BlockCase> block_cases() {
  std::vector<BlockCase> out;
  // 157 x 3 x 3 inputs per output channel (5.6 KB): blocks of 64 channels, the
  // last of 16; 6 x 6 output pixels; relu6 fused into each block.
  out.push_back({"conv2d_strided_relu6_partial_last_block", [](Builder& b) {
    Attributes a = conv_attrs(2, 2, 1);
    a.set(std::string(kFusedActivation), std::string("clip"));
    a.set(std::string(kFusedMin), 0.0);
    a.set(std::string(kFusedMax), 6.0);
    return b.op("conv2d", "", {{"input", b.input({1, 157, 11, 11})}, {"weight", b.constant({400, 157, 3, 3}, 0.05)}, {"bias", b.constant({400})}}, a);
  }, 7});
  // The same weights over 3 x 3 = 9 output pixels: one operator.
  out.push_back({"conv2d_few_rows_stays_whole", [](Builder& b) {
    return b.op("conv2d", "", {{"input", b.input({1, 157, 3, 3})}, {"weight", b.constant({400, 157, 3, 3}, 0.05)}, {"bias", b.constant({400})}},
                conv_attrs(2, 1, 1));
  }, 0});
  // A 1x1 convolution without bias, batch 2, height 1, 34 pixels: 1300 x 4 B per channel, blocks of 96, the last of 66.
  out.push_back({"conv2d_1x1_batch_2_height_1_no_bias", [](Builder& b) {
    return b.op("conv2d", "", {{"input", b.input({2, 1300, 1, 17})}, {"weight", b.constant({450, 1300, 1, 1}, 0.05)}}, conv_attrs(2, 1, 0));
  }, 5});
  // 3D (the depth unfolded into the channels): 100 x 27 per channel, blocks of 32, the last of 18.
  out.push_back({"conv3d_depth_3", [](Builder& b) {
    return b.op("conv3d", "", {{"input", b.input({1, 100, 3, 4, 5})}, {"weight", b.constant({210, 100, 3, 3, 3}, 0.05)}, {"bias", b.constant({210})}},
                conv_attrs(3, 1, 1));
  }, 7});
  // A linear over [2, 17] rows, 700 inputs: blocks of 160, the last of 10.
  out.push_back({"linear_rows_of_a_3d_input", [](Builder& b) {
    return b.op("linear", "", {{"input", b.input({2, 17, 700})}, {"weight", b.constant({810, 700}, 0.05)}, {"bias", b.constant({810})}});
  }, 6});
  out.push_back({"linear_three_rows_stays_whole", [](Builder& b) {
    return b.op("linear", "", {{"input", b.input({3, 700})}, {"weight", b.constant({810, 700}, 0.05)}, {"bias", b.constant({810})}});
  }, 0});
  // torch.export's linear: addmm(bias, x, mat2 [700, 810]), mat2's columns copied per block.
  out.push_back({"addmm_40_rows", [](Builder& b) {
    const ValueId x = b.input({40, 700});
    return b.op("addmm", "", {{"self", b.constant({810})}, {"mat1", x}, {"mat2", b.constant({700, 810}, 0.05)}});
  }, 6});
  return out;
}

class ColumnBlockTest : public ::testing::TestWithParam<BlockCase> {};

TEST_P(ColumnBlockTest, RunsInBlocksAndMatchesLibTorch) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    EXPECT_EQ(profile_against_libtorch(GetParam().build, threads).column_blocks, GetParam().blocks);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ColumnBlockTest, ::testing::ValuesIn(block_cases()), [](const auto& info) { return info.param.name; });

// One graph, its input's height symbolic: the blocks are made for many rows,
// the whole operator for few, and the blocks again; each run right.
TEST(ColumnBlocks, ANewInputShapeChangesTheBlocksAndKeepsTheResultsRight) {
  at::manual_seed(3);
  Builder b;
  const ValueId x = b.g.add_input("x", DType::kFloat32, SymbolicShape{Dim::of(1), Dim::of(157), Dim::sym("H"), Dim::of(5)});
  const ValueId y = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({400, 157, 3, 3}, 0.05)}, {"bias", b.constant({400})}}, conv_attrs(2, 1, 1));
  b.g.set_outputs({y});
  AgainstLibTorch graphs(b.g, 1);
  for (const auto& [height, blocks] : {std::pair{8, 7}, std::pair{1, 0}, std::pair{7, 7}}) {
    graphs.run_and_check({native::from_aten(at::randn({1, 157, height, 5}))}, "height " + std::to_string(height));
    EXPECT_EQ(graphs.backend->profile().at(0).column_blocks, blocks) << "height " << height;
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
