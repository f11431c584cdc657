// Resizes and resampling (lower/resize.cpp): nearest to a size and by
// factors, (bi/tri)linear and bicubic in both corner conventions, grid_sampler.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> resize_cases() {
  std::vector<OpCase> out;
  out.push_back({"upsample_nearest3d_by_two", [](Builder& b) {
    const ValueId x = b.input({1, 3, 3, 4, 5});
    b.g.set_outputs({b.op("upsample_nearest3d", "vec", {{"input", x}}, attrs({{"scale_factors", std::vector<double>{2.0, 2.0, 2.0}}}))});
  }});
  out.push_back({"upsample_nearest2d_to_a_size", [](Builder& b) {
    const ValueId x = b.input({2, 5, 3, 4});
    b.g.set_outputs({b.op("upsample_nearest2d", "vec", {{"input", x}}, attrs({{"output_size", Ints{7, 9}}}))});
  }});
  out.push_back({"upsample_bilinear_xnnpack_sizes_and_exact_factors", [](Builder& b) {
    const ValueId x = b.input({2, 5, 7, 4});
    b.g.set_outputs({b.op("upsample_bilinear2d", "", {{"self", x}}, attrs({{"output_size", Ints{3, 9}}, {"align_corners", false}})),
                     b.op("upsample_bilinear2d", "", {{"self", x}}, attrs({{"output_size", Ints{13, 1}}, {"align_corners", false}})),
                     b.op("upsample_bilinear2d", "", {{"self", x}}, attrs({{"output_size", Ints{11, 6}}, {"align_corners", true}})),
                     b.op("upsample_bilinear2d", "vec", {{"input", x}},
                          attrs({{"align_corners", false}, {"scale_factors", std::vector<double>{2.0, 0.5}}}))});
  }});
  out.push_back({"upsample_bilinear_to_a_size", [](Builder& b) {
    const ValueId x = b.input({1, 3, 5, 7});
    b.g.set_outputs({b.op("upsample_bilinear2d", "", {{"self", x}}, attrs({{"output_size", Ints{8, 3}}, {"align_corners", false}}))});
  }});
  out.push_back({"upsample_bilinear_aligned_by_factors", [](Builder& b) {
    const ValueId x = b.input({2, 3, 4, 6});
    b.g.set_outputs({b.op("upsample_bilinear2d", "vec", {{"input", x}},
                          attrs({{"align_corners", true}, {"scale_factors", std::vector<double>{1.5, 2.0}}}))});
  }});
  out.push_back({"upsample_trilinear_to_a_size", [](Builder& b) {
    const ValueId x = b.input({1, 2, 3, 4, 5});
    b.g.set_outputs({b.op("upsample_trilinear3d", "", {{"self", x}}, attrs({{"output_size", Ints{5, 7, 3}}, {"align_corners", false}}))});
  }});
  out.push_back({"upsample_linear_and_nearest_1d", [](Builder& b) {
    const ValueId x = b.input({2, 3, 7});
    const ValueId l = b.op("upsample_linear1d", "", {{"self", x}}, attrs({{"output_size", Ints{11}}, {"align_corners", false}}));
    b.g.set_outputs({l, b.op("upsample_nearest1d", "", {{"self", x}}, attrs({{"output_size", Ints{10}}}))});
  }});
  out.push_back({"upsample_bicubic_both_alignments", [](Builder& b) {
    const ValueId x = b.input({1, 2, 6, 5});
    const ValueId a = b.op("upsample_bicubic2d", "", {{"self", x}}, attrs({{"output_size", Ints{9, 4}}, {"align_corners", false}}));
    b.g.set_outputs({a, b.op("upsample_bicubic2d", "", {{"self", x}}, attrs({{"output_size", Ints{11, 7}}, {"align_corners", true}}))});
  }});
  // Every interpolation and padding mode, both corner conventions, a grid
  // that reaches past [-1, 1]; then a height of 1 (reflection over one row).
  for (const Shape& in : {Shape{2, 3, 5, 7}, Shape{1, 1, 1, 4}}) {
    out.push_back({"grid_sampler_2d_" + std::to_string(in[2]) + "x" + std::to_string(in[3]), [in](Builder& b) {
      const ValueId x = b.input(in);
      const ValueId raw = b.input({in[0], 4, 3, 2});
      const ValueId grid = b.op("mul", "Scalar", {{"self", b.op("tanh", "", {{"self", raw}})}}, attrs({{"other", 1.3}}));
      std::vector<ValueId> outs;
      for (std::int64_t mode : {0, 1, 2})
        for (std::int64_t padding : {0, 1, 2})
          for (bool corners : {false, true})
            outs.push_back(b.op("grid_sampler_2d", "", {{"input", x}, {"grid", grid}},
                                attrs({{"interpolation_mode", mode}, {"padding_mode", padding}, {"align_corners", corners}})));
      b.g.set_outputs(outs);
    }});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(resize_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
