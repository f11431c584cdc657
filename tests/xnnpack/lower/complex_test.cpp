// Complex tensors and Fourier transforms (lower/complex.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> complex_cases() {
  std::vector<OpCase> out;
  // Fourier transforms and complex values (lower/complex.cpp): odd, even,
  // size-1 and padded or cropped lengths, every normalization, lines past
  // the GEMM's length (a kernel of ours), complex inputs and arithmetic.
  const auto norm = [](const char* name) { return std::string(name); };
  out.push_back({"fft_rfftn_odd_sizes_ortho_and_backward", [norm](Builder& b) {
    const ValueId x = b.input({2, 1, 5, 7});
    b.g.set_outputs({b.op("fft_rfftn", "", {{"self", x}}, attrs({{"dim", Ints{-2, -1}}, {"norm", norm("ortho")}})),
                     b.op("fft_rfftn", "", {{"self", x}}, attrs({{"dim", Ints{1, 3}}}))});
  }});
  out.push_back({"fft_irfftn_to_an_odd_size_from_a_real_input", [norm](Builder& b) {
    const ValueId x = b.input({3, 4, 5});
    b.g.set_outputs({b.op("fft_irfftn", "", {{"self", x}}, attrs({{"s", Ints{4, 9}}, {"dim", Ints{1, 2}}, {"norm", norm("forward")}})),
                     b.op("fft_irfft2", "", {{"self", x}}, attrs({}))});
  }});
  out.push_back({"fft_fft_padded_cropped_and_inverse", [norm](Builder& b) {
    const ValueId x = b.input({3, 6});
    const ValueId spectrum = b.op("fft_fft", "", {{"self", x}}, attrs({{"n", std::int64_t{8}}, {"dim", std::int64_t{1}}}));
    b.g.set_outputs({spectrum, b.op("fft_fft", "", {{"self", x}}, attrs({{"n", std::int64_t{4}}, {"dim", std::int64_t{0}}, {"norm", norm("ortho")}})),
                     b.op("fft_ifft", "", {{"self", spectrum}}, attrs({{"dim", std::int64_t{-1}}}))});
  }});
  out.push_back({"fft_2_n_and_hermitian_forms", [norm](Builder& b) {
    const ValueId x = b.input({2, 3, 5});
    b.g.set_outputs({b.op("fft_ifft2", "", {{"self", x}}, attrs({{"norm", norm("forward")}})), b.op("fft_fftn", "", {{"self", x}}, attrs({})),
                     b.op("fft_ifftn", "", {{"self", x}}, attrs({{"s", Ints{4, 4}}})),
                     b.op("fft_hfft", "", {{"self", x}}, attrs({{"n", std::int64_t{7}}})),
                     b.op("fft_ihfft", "", {{"self", x}}, attrs({{"dim", std::int64_t{1}}, {"norm", norm("ortho")}}))});
  }});
  out.push_back({"fft_core_r2c_c2c_c2r", [](Builder& b) {
    const ValueId x = b.input({1, 3, 6, 5});
    const ValueId half = b.op("_fft_r2c", "", {{"self", x}}, attrs({{"dim", Ints{2, 3}}, {"normalization", std::int64_t{1}}, {"onesided", true}}));
    const ValueId back = b.op("_fft_c2c", "", {{"self", half}}, attrs({{"dim", Ints{2}}, {"normalization", std::int64_t{0}}, {"forward", false}}));
    b.g.set_outputs({half, b.op("_fft_r2c", "", {{"self", x}}, attrs({{"dim", Ints{1}}, {"normalization", std::int64_t{2}}, {"onesided", false}})),
                     b.op("_fft_c2r", "", {{"self", back}}, attrs({{"dim", Ints{2, 3}}, {"normalization", std::int64_t{2}}, {"last_dim_size", std::int64_t{5}}})),
                     b.op("_fft_c2r", "", {{"self", half}}, attrs({{"dim", Ints{3}}, {"normalization", std::int64_t{0}}, {"last_dim_size", std::int64_t{4}}}))});
  }});
  out.push_back({"fft_size_one", [](Builder& b) {
    const ValueId x = b.input({1, 1, 1});
    b.g.set_outputs({b.op("fft_rfftn", "", {{"self", x}}, attrs({})), b.op("fft_fft", "", {{"self", x}}, attrs({{"dim", std::int64_t{0}}})),
                     b.op("fft_irfft", "", {{"self", x}}, attrs({{"n", std::int64_t{1}}}))});
  }});
  out.push_back({"fft_lines_past_the_gemm", [](Builder& b) {
    const ValueId x = b.input({2, 1100});
    const ValueId spectrum = b.op("fft_rfft", "", {{"self", x}}, attrs({}));
    b.g.set_outputs({spectrum, b.op("fft_irfft", "", {{"self", spectrum}}, attrs({{"n", std::int64_t{1100}}}))});
  }});
  out.push_back({"complex_arithmetic_and_parts", [](Builder& b) {
    const ValueId x = b.input({2, 6}), y = b.input({2, 6});
    const ValueId p = b.op("fft_rfft", "", {{"self", x}}, attrs({})), q = b.op("fft_rfft", "", {{"self", y}}, attrs({}));
    const ValueId row = b.constant({1, 4});
    b.g.set_outputs({b.op("mul", "Tensor", {{"self", p}, {"other", q}}), b.op("add", "Tensor", {{"self", p}, {"other", q}}, attrs({{"alpha", 2.0}})),
                     b.op("sub", "Tensor", {{"self", p}, {"other", q}}), b.op("div", "Tensor", {{"self", p}, {"other", q}}),
                     b.op("mul", "Tensor", {{"self", row}, {"other", p}}), b.op("mul", "Scalar", {{"self", q}}, attrs({{"other", 2.5}})),
                     b.op("view_as_real", "", {{"self", b.op("conj_physical", "", {{"self", p}})}}), b.op("real", "", {{"self", p}}),
                     b.op("imag", "", {{"self", q}}), b.op("complex", "", {{"real", x}, {"imag", y}}),
                     b.op("view_as_complex", "", {{"self", b.op("view_as_real", "", {{"self", q}})}})});
  }});
  out.push_back({"complex_input_and_casts", [](Builder& b) {
    const ValueId z = b.typed_input(at::randn({3, 4}, at::kComplexFloat));
    const ValueId x = b.input({3, 4});
    const ValueId promoted = b.op("_to_copy", "", {{"self", x}}, attrs({{"dtype", std::int64_t{9}}}));
    // Complex weights (a spectral layer's), and an update in place.
    const ValueId w = b.g.add_constant("w", native::from_aten(at::randn({1, 4}, at::kComplexFloat)));
    const ValueId updated = b.op("add_", "Tensor", {{"self", b.op("clone", "", {{"self", z}})}, {"other", promoted}});
    b.g.set_outputs({b.op("fft_fft", "", {{"self", z}}, attrs({})), b.op("fft_ifft", "", {{"self", promoted}}, attrs({{"dim", std::int64_t{0}}})),
                     b.op("_to_copy", "", {{"self", z}}, attrs({{"dtype", std::int64_t{6}}})), b.op("add", "Tensor", {{"self", z}, {"other", promoted}}),
                     b.op("mul", "Tensor", {{"self", z}, {"other", w}}), b.op("mul_", "Tensor", {{"self", updated}, {"other", w}})});
  }});
  // Layout ops over complex values (a spectrum reshaped, sliced, permuted,
  // joined), their dims and sizes as attributes or as values the graph computes.
  out.push_back({"complex_layout_ops", [](Builder& b) {
    const ValueId x = b.input({2, 3, 4, 6});
    const ValueId z = b.op("fft_rfftn", "", {{"self", x}}, attrs({{"dim", Ints{-2, -1}}}));  // [2, 3, 4, 4] complex
    const ValueId minus_one = b.g.add_constant("minus_one", Tensor::from_vector<std::int64_t>({-1}, {}));
    const ValueId batch = b.op("size", "int", {{"self", x}}, attrs({{"dim", std::int64_t{0}}}));
    const NodeId list = b.g.add_node("prim::ListConstruct", {batch, minus_one}, {NewValue{}}, {}, "sizes");
    const ValueId flat = b.op("view", "", {{"self", z}, {"size", b.g.node(list).outputs[0]}});  // [2, 48]
    const ValueId back = b.op("reshape", "", {{"self", flat}}, attrs({{"shape", Ints{2, 3, 4, 4}}}));
    const ValueId unsq = b.op("unsqueeze", "", {{"self", z}}, attrs({{"dim", std::int64_t{-1}}}));
    std::vector<ValueId> outs = {
        b.op("fft_irfftn", "", {{"self", back}}, attrs({{"s", Ints{4, 6}}, {"dim", Ints{-2, -1}}})),
        b.op("permute", "", {{"self", z}}, attrs({{"dims", Ints{0, -1, 1, 2}}})),
        b.op("transpose", "int", {{"self", z}}, attrs({{"dim0", std::int64_t{-1}}, {"dim1", std::int64_t{1}}})),
        b.op("select", "int", {{"self", z}, {"dim", minus_one}}, attrs({{"index", std::int64_t{1}}})),
        b.op("slice", "Tensor", {{"self", z}}, attrs({{"dim", std::int64_t{-2}}, {"start", std::int64_t{1}}, {"end", std::int64_t{3}}, {"step", std::int64_t{1}}})),
        b.op("narrow", "", {{"self", z}}, attrs({{"dim", std::int64_t{-1}}, {"start", std::int64_t{1}}, {"length", std::int64_t{2}}})),
        b.op("flatten", "using_ints", {{"self", z}}, attrs({{"start_dim", std::int64_t{1}}, {"end_dim", std::int64_t{-1}}})),
        b.op("flatten", "using_ints", {{"self", z}}, attrs({{"start_dim", std::int64_t{2}}})),  // end_dim's default
        b.op("squeeze", "dim", {{"self", unsq}}, attrs({{"dim", std::int64_t{-1}}})),
        b.op("flip", "", {{"self", z}}, attrs({{"dims", Ints{-1, 1}}})),
        b.op("expand", "", {{"self", b.op("select", "int", {{"self", z}}, attrs({{"dim", std::int64_t{0}}, {"index", std::int64_t{0}}}))}},
             attrs({{"size", Ints{2, -1, -1, -1}}}))};
    outs.push_back(b.op("cat", "", {{"tensors", z}, {"tensors", z}}, attrs({{"dim", std::int64_t{-2}}})));
    outs.push_back(b.op("stack", "", {{"tensors", z}, {"tensors", z}}, attrs({{"dim", std::int64_t{-1}}})));
    for (ValueId part : b.ops("unbind", {{"self", z}}, attrs({{"dim", std::int64_t{-1}}}), 4)) outs.push_back(part);
    b.g.set_outputs(outs);
  }});
  // neuraloperator's spectral weights: einsum of complex operands (an
  // ellipsis with an implicit output too, one operand alone), complex matmul
  // and bmm, complex zeros written through slice_scatter and copy; size-1 dims, odd lengths.
  out.push_back({"complex_einsum_matmul_and_scatter", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5, 1});
    const ValueId z = b.op("fft_rfft", "", {{"self", x}}, attrs({{"dim", std::int64_t{2}}}));  // [2, 3, 3, 1] complex
    const ValueId w = b.g.add_constant("w", native::from_aten(at::randn({3, 4, 3, 1}, at::kComplexFloat)));
    const ValueId v = b.g.add_constant("v", native::from_aten(at::randn({1, 2}, at::kComplexFloat)));
    const ValueId u = b.g.add_constant("u", native::from_aten(at::randn({6, 1, 2}, at::kComplexFloat)));
    auto einsum = [&](const std::string& eq, ValueId p, ValueId q) {
      return b.op("einsum", "", {{"tensors", p}, {"tensors", q}}, attrs({{"equation", eq}}));
    };
    const ValueId mixed = einsum("bixy,ioxy->boxy", z, w);  // [2, 4, 3, 1]
    const ValueId zeros = b.op("zeros", "", {}, attrs({{"size", Ints{2, 4, 3, 1}}, {"dtype", std::int64_t{9}}}));
    const ValueId low = b.op("slice", "Tensor", {{"self", mixed}}, attrs({{"dim", std::int64_t{2}}, {"start", std::int64_t{0}}, {"end", std::int64_t{2}}, {"step", std::int64_t{1}}}));
    b.g.set_outputs({
        mixed,
        einsum("...y,yk", z, v),
        b.op("einsum", "", {{"tensors", z}}, attrs({{"equation", std::string("bixy->bxi")}})),  // one operand, a sum over y
        b.op("matmul", "", {{"self", z}, {"other", v}}),
        b.op("bmm", "", {{"self", b.op("view", "", {{"self", z}}, attrs({{"size", Ints{6, 3, 1}}}))}, {"mat2", u}}),
        b.op("slice_scatter", "", {{"self", zeros}, {"src", low}},
             attrs({{"dim", std::int64_t{2}}, {"start", std::int64_t{1}}, {"end", std::int64_t{3}}, {"step", std::int64_t{1}}})),
        b.op("copy", "", {{"self", zeros}, {"src", mixed}}),
    });
  }});
  // stft (audio front ends): odd lengths, a window shorter than n_fft, hop
  // lengths that leave a remainder, one- and two-sided, normalized, the
  // center overload's reflect and constant padding, no window; the window
  // functions; Tensor.unfold (core ATen's stft frames).
  out.push_back({"stft_windows_and_unfold", [](Builder& b) {
    auto i = [](std::int64_t v) { return AttributeValue(v); };
    const ValueId x1 = b.input({37});
    const ValueId x2 = b.input({2, 50});
    const ValueId hann = b.op("hann_window", "", {}, attrs({{"window_length", i(6)}}));
    const ValueId hamming = b.op("hamming_window", "periodic", {}, attrs({{"window_length", i(8)}, {"periodic", false}}));
    b.g.set_outputs({
        b.op("stft", "", {{"self", x1}, {"window", hann}},
             attrs({{"n_fft", i(8)}, {"hop_length", i(3)}, {"win_length", i(6)}, {"normalized", false}, {"onesided", true}, {"return_complex", true}})),
        b.op("stft", "", {{"self", x2}, {"window", hamming}},
             attrs({{"n_fft", i(8)}, {"hop_length", i(2)}, {"win_length", i(8)}, {"normalized", true}, {"onesided", false}, {"return_complex", true}})),
        b.op("stft", "center", {{"self", x2}},
             attrs({{"n_fft", i(10)}, {"hop_length", i(4)}, {"center", true}, {"pad_mode", std::string("reflect")}, {"normalized", false},
                    {"return_complex", true}})),
        b.op("stft", "center", {{"self", x1}},
             attrs({{"n_fft", i(7)}, {"hop_length", i(5)}, {"center", true}, {"pad_mode", std::string("constant")}, {"normalized", false},
                    {"return_complex", true}})),
        b.op("bartlett_window", "", {}, attrs({{"window_length", i(5)}})),
        b.op("blackman_window", "periodic", {}, attrs({{"window_length", i(9)}, {"periodic", true}})),
        b.op("unfold", "", {{"self", x2}}, attrs({{"dimension", i(1)}, {"size", i(7)}, {"step", i(3)}})),
        b.op("unfold", "", {{"self", x1}}, attrs({{"dimension", i(-1)}, {"size", i(1)}, {"step", i(4)}})),
    });
  }});
  // The spellings a functionalized graph (the fx trace, core ATen) gives views: their copying forms.
  out.push_back({"view_copies_of_complex_and_real", [](Builder& b) {
    const ValueId x = b.input({2, 5, 6});
    const ValueId pairs = b.op("view_as_real_copy", "", {{"self", b.op("fft_rfft", "", {{"self", x}}, attrs({}))}});
    b.g.set_outputs({b.op("select_copy", "int", {{"self", pairs}}, attrs({{"dim", std::int64_t{-1}}, {"index", std::int64_t{1}}})),
                     b.op("select_copy", "int", {{"self", x}}, attrs({{"dim", std::int64_t{1}}, {"index", std::int64_t{3}}})),
                     b.op("unsqueeze_copy", "", {{"self", x}}, attrs({{"dim", std::int64_t{0}}}))});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(complex_cases()), op_case_name);

// A value known to be complex goes only to the ops that take one: finalize()
// names the node and its input; so does planning where the reader gave no dtype.
TEST(XnnpackComplex, OtherOpsOnComplexValuesAreRefusedByName) {
  for (bool typed : {true, false}) {
    Builder b;
    const ValueId x = b.input({2, 6});
    const ValueId spectrum = b.op("fft_rfft", "", {{"self", x}}, attrs({}));
    if (typed) b.g.set_value_type(spectrum, DType::kComplex64, std::nullopt);
    b.g.set_outputs({b.op("sum", "", {{"self", spectrum}}, attrs({}))});
    TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
    try {
      g.finalize();
      FAIL() << "a sum of complex values was planned";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
      EXPECT_NE(e.message().find("aten::sum"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("is complex"), std::string::npos) << e.message();
    }
  }
}

// New input lengths give the transforms new DFT matrices (and the old length's again).
TEST(XnnpackComplex, NewLengthsPlanNewTransforms) {
  Builder b;
  const ValueId x = b.input({2, 8});
  b.g.set_value_type(x, DType::kFloat32, std::nullopt);  // any shape
  b.g.set_outputs({b.op("fft_rfftn", "", {{"self", x}}, attrs({{"norm", std::string("ortho")}}))});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({2}));
  g.finalize();
  for (std::int64_t w : {8, 12, 8, 1}) {
    const at::Tensor in = at::randn({2, w});
    EXPECT_LE(testing::max_relative_error(native::to_aten(g.run({native::from_aten(in)})[0]), at::fft_rfftn(in, std::nullopt, std::nullopt, "ortho")), 1e-5)
        << "width " << w;
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
