// Convolutions (lower/conv.cpp): 1D, 2D and 3D, transposed, grouped and
// dilated, unbatched, with the geometry the test models do not reach; and
// pixel folding (a convolution with few output channels computes
// neighbouring output pixels as one).
#include "xnnpack/lower/lowering_test.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> conv_cases() {
  std::vector<OpCase> out;
  out.push_back({"conv3d_strided_padded_grouped", [](Builder& b) {
    const ValueId x = b.input({2, 4, 9, 10, 11});
    b.g.set_outputs({b.op("conv3d", "", {{"input", x}, {"weight", b.constant({6, 2, 3, 3, 3})}, {"bias", b.constant({6})}},
                          attrs({{"stride", Ints{2, 1, 2}}, {"padding", Ints{1, 1, 0}}, {"dilation", Ints{1, 1, 1}}, {"groups", std::int64_t{2}}}))});
  }});
  out.push_back({"conv3d_dilated_depth_no_bias", [](Builder& b) {
    const ValueId x = b.input({1, 3, 12, 8, 8});
    b.g.set_outputs({b.op("conv3d", "", {{"input", x}, {"weight", b.constant({5, 3, 3, 1, 3})}},
                          attrs({{"stride", Ints{1, 1, 1}}, {"padding", Ints{2, 0, 1}}, {"dilation", Ints{2, 1, 1}}, {"groups", std::int64_t{1}}}))});
  }});
  out.push_back({"conv_transpose3d_overlapping", [](Builder& b) {
    const ValueId x = b.input({1, 4, 5, 6, 7});
    b.g.set_outputs({b.op("conv_transpose3d", "input", {{"input", x}, {"weight", b.constant({4, 3, 3, 3, 3})}, {"bias", b.constant({3})}},
                          attrs({{"stride", Ints{2, 2, 2}}, {"padding", Ints{1, 1, 1}}, {"output_padding", Ints{1, 0, 1}},
                                 {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1, 1}}}))});
  }});
  // Kernels equal to their strides: a GEMM and the taps put in place.
  out.push_back({"conv_transpose3d_kernel_2_stride_2", [](Builder& b) {
    const ValueId x = b.input({1, 5, 3, 1, 4});
    b.g.set_outputs({b.op("conv_transpose3d", "input", {{"input", x}, {"weight", b.constant({5, 3, 2, 2, 2})}, {"bias", b.constant({3})}},
                          attrs({{"stride", Ints{2, 2, 2}}, {"padding", Ints{0, 0, 0}}, {"output_padding", Ints{0, 0, 0}},
                                 {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1, 1}}}))});
  }});
  out.push_back({"conv_transpose3d_kernel_1_2_3_batch_2_no_bias", [](Builder& b) {
    const ValueId x = b.input({2, 7, 2, 3, 2});
    b.g.set_outputs({b.op("conv_transpose3d", "input", {{"input", x}, {"weight", b.constant({7, 9, 1, 2, 3})}},
                          attrs({{"stride", Ints{1, 2, 3}}, {"padding", Ints{0, 0, 0}}, {"output_padding", Ints{0, 0, 0}},
                                 {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1, 1}}}))});
  }});
  out.push_back({"conv_transpose2d_kernel_3_stride_3_relu", [](Builder& b) {
    const ValueId x = b.input({1, 6, 5, 1});
    b.g.set_outputs({b.op("conv_transpose2d", "input", {{"input", x}, {"weight", b.constant({6, 5, 3, 3})}, {"bias", b.constant({5})}},
                          attrs({{"stride", Ints{3, 3}}, {"padding", Ints{0, 0}}, {"output_padding", Ints{0, 0}},
                                 {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1}}, {std::string(kFusedActivation), std::string("relu")}}))});
  }});
  out.push_back({"conv_transpose2d_grouped", [](Builder& b) {
    const ValueId x = b.input({2, 4, 6, 5});
    b.g.set_outputs({b.op("conv_transpose2d", "input", {{"input", x}, {"weight", b.constant({4, 3, 4, 4})}, {"bias", b.constant({6})}},
                          attrs({{"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"output_padding", Ints{0, 0}},
                                 {"groups", std::int64_t{2}}, {"dilation", Ints{1, 1}}}))});
  }});
  out.push_back({"conv1d_strided_dilated_grouped", [](Builder& b) {
    const ValueId x = b.input({2, 6, 17});
    b.g.set_outputs({b.op("conv1d", "", {{"input", x}, {"weight", b.constant({4, 3, 5})}, {"bias", b.constant({4})}},
                          attrs({{"stride", Ints{2}}, {"padding", Ints{3}}, {"dilation", Ints{2}}, {"groups", std::int64_t{2}}}))});
  }});
  // The portable kernels of issue 33, each alone, on odd shapes.
  out.push_back({"unbatched_conv2d_conv1d_and_same_padding", [](Builder& b) {
    const ValueId x = b.input({3, 5, 7});  // [C, H, W]: no batch dim
    const ValueId c2 = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({5, 3, 2, 3})}, {"bias", b.constant({5})}},
                            attrs({{"stride", Ints{1, 2}}, {"padding", Ints{1, 0}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    const ValueId c1 = b.op("conv1d", "", {{"input", b.input({3, 9})}, {"weight", b.constant({2, 3, 4})}},
                            attrs({{"stride", Ints{1}}, {"padding", Ints{2}}, {"dilation", Ints{1}}, {"groups", std::int64_t{1}}}));
    // 'same' with an even kernel (one more padding after) and dilation.
    const ValueId same = b.op("conv2d", "padding", {{"input", b.input({1, 3, 6, 5})}, {"weight", b.constant({5, 3, 4, 3})}},
                              attrs({{"stride", Ints{1, 1}}, {"padding", std::string("same")}, {"dilation", Ints{1, 2}}, {"groups", std::int64_t{1}}}));
    b.g.set_outputs({c2, c1, same});
  }});
  // Padding past what XNNPACK's deconvolution takes: the portable kernel, 2D and 3D, grouped, dilated.
  out.push_back({"conv_transpose_padding_xnnpack_refuses", [](Builder& b) {
    const ValueId t2 = b.op("conv_transpose2d", "input", {{"input", b.input({1, 3, 4, 5})}, {"weight", b.constant({3, 3, 3, 3})}, {"bias", b.constant({3})}},
                            attrs({{"stride", Ints{2, 2}}, {"padding", Ints{2, 2}}, {"output_padding", Ints{1, 1}},
                                   {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1}}}));
    const ValueId t3 = b.op("conv_transpose3d", "input", {{"input", b.input({3, 4, 4, 4})}, {"weight", b.constant({3, 3, 3, 3, 3})}},
                            attrs({{"stride", Ints{2, 2, 2}}, {"padding", Ints{2, 2, 2}}, {"output_padding", Ints{1, 1, 1}},
                                   {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1, 1}}}));
    const ValueId tg = b.op("conv_transpose2d", "input", {{"input", b.input({2, 2, 4, 4})}, {"weight", b.constant({2, 2, 4, 5})}, {"bias", b.constant({4})}},
                            attrs({{"stride", Ints{3, 2}}, {"padding", Ints{1, 2}}, {"output_padding", Ints{2, 3}},
                                   {"groups", std::int64_t{2}}, {"dilation", Ints{4, 4}}}));
    b.g.set_outputs({t2, t3, tg});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(conv_cases()), op_case_name);

// Pixel folding: a convolution with few output channels computes
// neighbouring output pixels of a row as one, to fill XNNPACK's tiles of
// output channels (32 wide with AVX-512, 16 with AVX, 8 in wasm and on Arm).
// Each case: the fold its node's profile shows for each tile width, and its
// output against LibTorch, at 1 and 2 threads.
struct FoldCase {
  std::string name;
  std::function<ValueId(Builder&)> build;
  std::map<int, int> fold;  // by XnnpackBackend::gemm_tile_columns()
};

void PrintTo(const FoldCase& c, std::ostream* os) { *os << c.name; }

std::vector<FoldCase> fold_cases() {
  std::vector<FoldCase> out;
  auto conv2d = [](Shape in, Shape weight, std::int64_t stride, std::int64_t padding, std::int64_t dilation = 1) {
    return [=](Builder& b) {
      Attributes a = conv_attrs(2, stride, padding);
      a.set("dilation", Ints(2, dilation));
      return b.op("conv2d", "", {{"input", b.input(in)}, {"weight", b.constant(weight, 0.2)}, {"bias", b.constant({weight[0]})}}, a);
    };
  };
  // 16 channels, 5 inputs, 14 columns: two pixels fill a tile of 32.
  out.push_back({"conv2d_16_channels", conv2d({1, 5, 7, 14}, {16, 5, 3, 3}, 1, 1), {{32, 2}, {16, 1}, {8, 1}}});
  // 13 output columns do not pair: one operator as it was.
  out.push_back({"conv2d_16_channels_odd_width_stays", conv2d({1, 5, 7, 13}, {16, 5, 3, 3}, 1, 1), {{32, 1}, {16, 1}, {8, 1}}});
  // Stride 2, 8 channels, 8 columns: four pixels under a kernel 9 wide with stride 8.
  out.push_back({"conv2d_8_channels_stride_2", conv2d({1, 3, 9, 16}, {8, 3, 3, 3}, 2, 1), {{32, 4}, {16, 1}, {8, 1}}});
  // 2 channels (a head), batch 2: up to 16 pixels.
  out.push_back({"conv2d_2_channels_batch_2", conv2d({2, 3, 5, 34}, {2, 3, 3, 3}, 1, 0), {{32, 16}, {16, 8}, {8, 4}}});
  // A 5x5 kernel: two pixels widen it to 6 columns only.
  out.push_back({"conv2d_5x5_16_channels", conv2d({1, 4, 6, 10}, {16, 4, 5, 5}, 1, 2), {{32, 2}, {16, 1}, {8, 1}}});
  // A 1x1 kernel would widen with the pixels: nothing gained.
  out.push_back({"conv2d_1x1_stays", conv2d({1, 6, 4, 8}, {16, 6, 1, 1}, 1, 0), {{32, 1}, {16, 1}, {8, 1}}});
  out.push_back({"conv2d_dilated_stays", conv2d({1, 5, 9, 12}, {16, 5, 3, 3}, 1, 2, 2), {{32, 1}, {16, 1}, {8, 1}}});
  // 3D (the depth unfolded into the channels), 12 channels from 1: 24 of a tile of 32.
  out.push_back({"conv3d_12_channels", [](Builder& b) {
    Attributes a = conv_attrs(3, 1, 0);
    a.set(std::string(kFusedActivation), std::string("relu"));
    return b.op("conv3d", "", {{"input", b.input({1, 1, 5, 6, 8})}, {"weight", b.constant({12, 1, 3, 3, 3}, 0.2)}, {"bias", b.constant({12})}}, a);
  }, {{32, 2}, {16, 1}, {8, 1}}});
  return out;
}

class PixelFoldTest : public ::testing::TestWithParam<FoldCase> {};

TEST_P(PixelFoldTest, FoldsPixelsAndMatchesLibTorch) {
  const int nr = XnnpackBackend::gemm_tile_columns();
  ASSERT_TRUE(GetParam().fold.count(nr)) << "tile width " << nr;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    EXPECT_EQ(profile_against_libtorch(GetParam().build, threads).pixel_fold, GetParam().fold.at(nr)) << "tile width " << nr;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, PixelFoldTest, ::testing::ValuesIn(fold_cases()), [](const auto& info) { return info.param.name; });

// The input's width symbolic, 8 output channels: output widths that four
// divide fold four pixels (AVX-512), other even ones two, odd ones none; each
// run right.
TEST(PixelFold, ANewInputWidthChangesTheFoldAndKeepsTheResultsRight) {
  at::manual_seed(5);
  Builder b;
  const ValueId x = b.g.add_input("x", DType::kFloat32, SymbolicShape{Dim::of(1), Dim::of(5), Dim::of(6), Dim::sym("W")});
  const ValueId y = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({8, 5, 3, 3}, 0.2)}, {"bias", b.constant({8})}}, conv_attrs(2, 1, 0));
  b.g.set_outputs({y});
  AgainstLibTorch graphs(b.g, 1);
  // Output widths 12, 10, 11, 8 (inputs 2 wider), their folds by tile width.
  const std::map<int, std::vector<int>> folds{{32, {4, 2, 1, 4}}, {16, {2, 2, 1, 2}}, {8, {1, 1, 1, 1}}};
  const int nr = XnnpackBackend::gemm_tile_columns();
  ASSERT_TRUE(folds.count(nr)) << "tile width " << nr;
  const std::vector<int> widths{12, 10, 11, 8};
  for (std::size_t k = 0; k < widths.size(); ++k) {
    graphs.run_and_check({native::from_aten(at::randn({1, 5, 6, widths[k] + 2}))}, "output width " + std::to_string(widths[k]));
    EXPECT_EQ(graphs.backend->profile().at(0).pixel_fold, folds.at(nr)[k]) << "output width " << widths[k];
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
