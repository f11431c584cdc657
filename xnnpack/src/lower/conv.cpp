// Convolutions: 1D (as 2D, or a portable kernel), 2D and 3D, transposed, grouped and dilated, with their fused activations.
#include "lower/conv.h"
#include "lower/conv_winograd.h"
#include "lower/fused_activation.h"
#include "lower/gemm.h"
#include "lower/view.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/depthwise.h"
#include "kernels/conv/pointwise.h"
#include "kernels/conv/unfolded.h"

namespace tracegraph::xnnpack {
namespace {

// A fold must promise at least this much more useful work per multiply-add.
constexpr double kMinFoldGain = 1.25;
// The most inputs per output pixel (KD*KH*KW*C) an unfolded convolution
// (lower_unfolded()) is measured for: a 7x7 stem over 3 channels is 147.
constexpr i64 kMaxUnfoldedRow = 160;

}  // namespace

int XnnpackBackend::gemm_tile_columns() {
  // As XNNPACK 2024-11-08's init_f32_gemm_config() picks its microkernels (its
  // nr), from the CPU as it sees it (cpu.h).
#if defined(__x86_64__) || defined(__i386__)
  const cpu::Features& cpu = cpu::features();
  return cpu.avx512f ? 32 : cpu.fma || cpu.avx ? 16 : 8;
#else
  return 8;  // wasm SIMD, Arm NEON
#endif
}

namespace {

// Pixel folding. XNNPACK computes output channels in tiles of
// gemm_tile_columns(); a convolution with fewer, or not a multiple, computes
// the rest of its last tile for nothing. `fold` neighbouring output pixels
// of a row computed as one pixel of fold x the channels, by a kernel
// (fold - 1) strides wider with fold x the stride, fill the tiles; in
// channels-last order that output is the same memory. The fold (2 to 16)
// that fills them best where it does at least kMinFoldGain x the useful
// work per multiply-add; else 1.
i64 pixel_fold(i64 channels, i64 kernel_w, i64 stride_w, i64 out_w) {
  const i64 nr = XnnpackBackend::gemm_tile_columns();
  // The useful share of the multiply-adds: the folded channels over whole
  // tiles, times the kernel's columns over the widened kernel's.
  auto useful = [&](i64 fold) {
    const i64 c = fold * channels;
    return static_cast<double>(c) / static_cast<double>((c + nr - 1) / nr * nr) * static_cast<double>(kernel_w) /
           static_cast<double>(kernel_w + (fold - 1) * stride_w);
  };
  i64 best = 1;
  double best_useful = kMinFoldGain * useful(1);
  for (i64 fold = 2; fold <= 16 && fold * channels <= 2 * nr && fold <= out_w; fold *= 2) {
    if (out_w % fold == 0 && useful(fold) > best_useful) best = fold, best_useful = useful(fold);
  }
  return best;
}

// The convolution's input and its padding in `padding` (before each spatial
// dim, the same after): torch's numbers, or its padding='valid' (none) and
// 'same' (dilation * (kernel - 1) in all, stride 1). Where 'same' pads an odd
// amount, the one more after is zeros added to a copy of the input, returned.
int as_padded(Context& cx, const Node& n, int x, const std::vector<i64>& kernel, const std::vector<i64>& stride,
              const std::vector<i64>& dilation, std::vector<i64>& padding) {
  const std::size_t rank = kernel.size();
  const AttributeValue* p = n.attributes.find("padding");
  if (!p || !std::holds_alternative<std::string>(*p)) {
    padding = cx.spatial_arg(n, "padding", rank, 0);
    return x;
  }
  const std::string& mode = std::get<std::string>(*p);
  padding.assign(rank, 0);
  if (mode == "valid") return x;
  if (mode != "same") fail(ErrorCode::kInvalidArgument, cx.where(n) + ": padding '" + mode + "' (torch knows 'same' and 'valid')");
  std::vector<i64> extra(rank, 0);
  for (std::size_t i = 0; i < rank; ++i) {
    if (stride[i] != 1) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": padding 'same' with stride " + shape_str(stride) + " (torch needs 1)");
    const i64 total = dilation[i] * (kernel[i] - 1);
    padding[i] = total / 2;
    extra[i] = total - 2 * padding[i];
  }
  if (std::all_of(extra.begin(), extra.end(), [](i64 e) { return e == 0; })) return x;
  x = cx.as_layout(x, false);
  const Shape shape = cx.slot(x).shape;
  if (shape.size() < rank) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(shape) + " for a " + std::to_string(rank) + "D convolution");
  std::vector<i64> before(shape.size(), 0), after(shape.size(), 0);
  Shape padded = shape;
  for (std::size_t i = 0; i < rank; ++i) {
    after[shape.size() - rank + i] = extra[i];
    padded[shape.size() - rank + i] += extra[i];
  }
  const int out = cx.new_tensor(padded, false);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, shape, before, after] { portable::pad(cx.ptr(x), cx.ptr(out), shape, before, after, portable::PadMode::kConstant, 0.0f); };
  return out;
}

// A convolution's arguments, read and checked once (lower_conv()) for the
// direct and the transposed lowerings.
struct ConvArgs {
  const Tensor& w;
  const Tensor& b;  // may be undefined
  std::size_t rank;  // spatial dims: 2 or 3
  int x;             // the input, channels-last ('same' padding's odd extra added)
  Shape xs;
  std::vector<i64> stride, dilation, output_padding, kernel, padding;
  i64 groups, in_channels;
  Fused fused;
};

// XNNPACK's direct convolution of one node: its geometry, its operators
// (made once per fold and column-block width) and their reshape.
struct DirectConv {
  Context& cx;
  const Node& n;
  NodeState& st;
  const ConvArgs& a;
  i64 cg, out_channels, cog, kd, kh, kw;
  kernels::Window depth;
  std::size_t h;  // index of H among the spatial args
  i64 out_w, block_width, fold, fold_kw;

  DirectConv(Context& cx_, const Node& n_, NodeState& st_, const ConvArgs& a_) : cx(cx_), n(n_), st(st_), a(a_) {
    const Shape& ws = a.w.shape();
    const std::size_t rank = a.rank;
    cg = a.in_channels / a.groups, out_channels = ws[0], cog = out_channels / a.groups;
    if (ws[1] != cg || out_channels % a.groups)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": weight " + shape_str(ws) + " for " + std::to_string(a.in_channels) + " input channels in " + std::to_string(a.groups) + " groups");
    if (a.b.defined() && a.b.numel() != out_channels) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": bias " + shape_str(a.b.shape()) + " for " + std::to_string(out_channels) + " output channels");
    kd = rank == 3 ? ws[2] : 1;
    kh = ws[rank == 3 ? 3 : 2], kw = ws[rank == 3 ? 4 : 3];
    depth = kernels::Window{kd, rank == 3 ? a.stride[0] : 1, rank == 3 ? a.padding[0] : 0, rank == 3 ? a.dilation[0] : 1};
    h = rank == 3 ? 1 : 0;
    const Shape& xs = a.xs;
    // The GEMM's rows (output pixels) decide whether the output channels go
    // in column blocks (column_blocks()); only without groups, whose output
    // channels interleave.
    out_w = shape_rules::window_output(xs[rank == 3 ? 4 : 3], kw, a.stride[h + 1], a.padding[h + 1], a.dilation[h + 1]).value_or(0);
    const i64 out_d = shape_rules::window_output(rank == 3 ? xs[2] : 1, kd, depth.stride, depth.padding, depth.dilation).value_or(0);
    const i64 out_h = shape_rules::window_output(xs[rank == 3 ? 3 : 2], kh, a.stride[h], a.padding[h], a.dilation[h]).value_or(0);
    // The output against the budget before a measurement runs on its input
    // (an input of 1x1x10000x400x400 measured for 34 s under ASan first).
    cx.within_budget(rank == 3 ? Shape{xs[0], out_channels, out_d, out_h, out_w} : Shape{xs[0], out_channels, out_h, out_w});
    const i64 rows = xs[0] * out_d * out_h * out_w;
    block_width = a.groups == 1 ? column_block_width(rows, kh * kw * kd * cg, out_channels) : 0;
    // Few output channels fill XNNPACK's tiles better with neighbouring
    // pixels folded into them (pixel_fold()); not with groups or column
    // blocks (many channels), nor dilated rows.
    fold = a.groups == 1 && block_width == 0 && a.dilation[h + 1] == 1 ? pixel_fold(out_channels, kw, a.stride[h + 1], out_w) : 1;
    fold_kw = kw + (fold - 1) * a.stride[h + 1];  // the folded kernel's width
  }

  // The output channels a setup call writes at a time.
  i64 block() const { return block_width ? block_width : out_channels; }

  // The operators, made once (again after Winograd ran on other shapes, or
  // for another width of column blocks); the node's operator fold - 1, so
  // that shapes that fold differently each keep theirs.
  const NodeState::ColumnBlocks& ops() const {
    // XNNPACK's kernel layout [g][o][kh][kw][kd*cg + c] from torch's
    // [g*cog + o][c][kd][kh][kw]; folded, output channel j * out_channels + o
    // is pixel j's channel o: the kernel shifted j strides right, zeros around.
    std::vector<float> packed, bias;
    const i64 ic = kd * cg;
    const std::vector<i64>& stride = a.stride;
    const std::vector<i64>& padding = a.padding;
    const std::vector<i64>& dilation = a.dilation;
    return column_blocks(st, static_cast<std::size_t>(fold - 1), block_width, out_channels, [&](i64 first, i64 count, xnn_operator_t* op) {
      if (packed.empty()) {
        packed.assign(static_cast<std::size_t>(a.w.numel() / kw * fold_kw * fold), 0.0f);
        const float* src = a.w.data_as<float>();
        for (i64 j = 0; j < fold; ++j)
          for (i64 o = 0; o < out_channels; ++o)
            for (i64 c = 0; c < cg; ++c)
              for (i64 d = 0; d < kd; ++d)
                for (i64 y = 0; y < kh; ++y)
                  for (i64 x2 = 0; x2 < kw; ++x2)
                    packed[static_cast<std::size_t>((((j * out_channels + o) * kh + y) * fold_kw + x2 + j * stride[h + 1]) * ic + d * cg + c)] =
                        src[(((o * cg + c) * kd + d) * kh + y) * kw + x2];
        if (a.b.defined())
          for (i64 j = 0; j < fold; ++j) bias.insert(bias.end(), a.b.data_as<float>(), a.b.data_as<float>() + out_channels);
      }
      // Whole: `cog` output channels per group (folded: fold x); a block (groups == 1): its `count`.
      cx.check(xnn_create_convolution2d_nhwc_f32(
                   u32(padding[h]), u32(padding[h + 1]),
                   u32(padding[h]), u32(padding[h + 1]),
                   u32(kh), u32(fold_kw), u32(stride[h]),
                   u32(fold * stride[h + 1]), u32(dilation[h]),
                   u32(dilation[h + 1]), u32(a.groups),
                   static_cast<std::size_t>(ic), static_cast<std::size_t>(count == out_channels ? cog * fold : count), static_cast<std::size_t>(ic * a.groups),
                   static_cast<std::size_t>(out_channels * fold), packed.data() + first * kh * fold_kw * ic, bias.empty() ? nullptr : bias.data() + first,
                   a.fused.min, a.fused.max, 0, nullptr, nullptr, op),
               n, "creating a convolution");
    });
  }

  // Reshapes the blocks for `images` of in_h x in_w; their largest workspace.
  std::size_t reshape(const NodeState::ColumnBlocks& blocks, i64 images, i64 in_h, i64 in_w, std::size_t& oh, std::size_t& ow) const {
    std::size_t workspace = 0;
    for (const XnnOp& op : blocks.ops) {
      std::size_t ws_size = 0, ws_align = 0;
      cx.check(xnn_reshape_convolution2d_nhwc_f32(op.op, static_cast<std::size_t>(images), static_cast<std::size_t>(in_h),
                                                  static_cast<std::size_t>(in_w), &ws_size, &ws_align, &oh, &ow, cx.pool()),
               n, "reshaping a convolution");
      workspace = std::max(workspace, ws_size);
    }
    ow *= static_cast<std::size_t>(fold);  // folded pixels: fold each
    return workspace;
  }
};

bool all_equal(const std::vector<i64>& v, i64 value) {
  return std::all_of(v.begin(), v.end(), [value](i64 e) { return e == value; });
}

// Our kernels where they beat XNNPACK's direct convolution on this shape
// (Winograd, 3x3 depthwise, 1x1, unfolded), each measured against it at
// finalize(); false where none applies or none won.
bool lower_conv_measured(const DirectConv& d) {
  Context& cx = d.cx;
  const ConvArgs& a = d.a;
  const bool winograd_shape = a.groups == 1 && d.kh == 3 && d.kw == 3 && (a.rank == 2 || d.kd == 3) && all_equal(a.stride, 1) && all_equal(a.dilation, 1);
  // A 3x3 depthwise convolution may run on our kernel (lower_depthwise());
  // one channel alone is an ordinary convolution (Winograd's, or XNNPACK's).
  const bool depthwise_shape = a.rank == 2 && a.groups > 1 && a.groups == a.in_channels && d.out_channels == a.in_channels && d.kh == 3 && d.kw == 3 &&
                               all_equal(a.dilation, 1) && a.stride[0] <= 2 && a.stride[1] <= 2;
  const bool pointwise_shape = a.groups == 1 && d.kh == 1 && d.kw == 1 && d.kd == 1 && all_equal(a.stride, 1) && all_equal(a.padding, 0);
  // Few inputs per output pixel (a first layer's 3 channels by 3x3 or 7x7):
  // our GEMM over the unfolded input may beat XNNPACK's (lower_unfolded()).
  const bool unfolded_shape = a.groups == 1 && !pointwise_shape && d.kd * d.kh * d.kw * a.in_channels <= kMaxUnfoldedRow;
  if (!winograd_shape && !depthwise_shape && !pointwise_shape && !unfolded_shape) return false;
  // The direct convolution once, for the measurement: [batch, (D,) H, W, C] in, channels-last out.
  // Its buffers (the unfolded depth, XNNPACK's workspace), grown to each
  // call's sizes: Winograd's and the unfolded measurement crop differently.
  struct Scratch {
    AlignedFloats unfolded, workspace;
    std::size_t unfolded_bytes = 0, workspace_bytes = 0;
  };
  auto scratch = std::make_shared<Scratch>();
  DirectRun direct = [&d, scratch](const float* in, float* y, i64 batch, const i64* sizes) {
    const NodeState::ColumnBlocks& blocks = d.ops();
    const std::size_t rank = d.a.rank;
    const float* conv_in = in;
    i64 images = batch;
    const i64 in_h = sizes[rank - 2], in_w = sizes[rank - 1];
    std::size_t oh = 0, ow = 0;
    if (rank == 3 && d.depth.kernel == 1 && d.depth.stride == 1 && d.depth.padding == 0) images = batch * sizes[0];  // depth slices as images
    else if (rank == 3) {
      const i64 out_depth = shape_rules::window_output(sizes[0], d.depth.kernel, d.depth.stride, d.depth.padding, d.depth.dilation).value_or(0);
      images = batch * out_depth;
      const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(images * in_h * in_w * d.depth.kernel * d.a.in_channels);
      if (scratch->unfolded_bytes < bytes) scratch->unfolded = aligned_floats(bytes), scratch->unfolded_bytes = bytes;
      float* u = scratch->unfolded.get();
      d.cx.parallel_slices(images, [&](i64 first, i64 count) {
        kernels::unfold_depth(in, u, batch, sizes[0], out_depth, in_h * in_w, 1, d.a.in_channels, d.depth, first, count);
      });
      conv_in = u;
    }
    const std::size_t ws_size = d.reshape(blocks, images, in_h, in_w, oh, ow);
    if (scratch->workspace_bytes < ws_size) scratch->workspace = aligned_floats(ws_size), scratch->workspace_bytes = ws_size;
    for (std::size_t k = 0; k < blocks.ops.size(); ++k)
      d.cx.check(xnn_setup_convolution2d_nhwc_f32(blocks.ops[k].op, ws_size ? scratch->workspace.get() : nullptr, conv_in, y + static_cast<i64>(k) * d.block()),
                 d.n, "setting up a convolution");
    for (const XnnOp& op : blocks.ops) d.cx.check(xnn_run_operator(op.op, d.cx.pool()), d.n, "running a convolution");
  };
  const Node& n = d.n;
  NodeState& st = d.st;
  return (winograd_shape && lower_winograd(cx, n, st, a.x, a.w, a.b, a.padding, a.fused, direct)) ||
         (depthwise_shape && lower_depthwise(cx, n, st, a.x, a.w, a.b, a.stride, a.padding, a.fused, direct)) ||
         (pointwise_shape && lower_pointwise_conv(cx, n, st, a.x, a.w, a.b, a.fused, direct)) ||
         (unfolded_shape && lower_unfolded(cx, n, st, a.x, a.w, a.b, a.stride, a.padding, a.dilation, a.fused, direct));
}

// A 2D or 3D convolution: our measured kernels where one wins, else
// XNNPACK's direct convolution (3D: the depth taps unfolded into channels,
// each output depth slice an image).
void lower_conv_direct(Context& cx, const Node& n, NodeState& st, const ConvArgs& a) {
  const DirectConv d(cx, n, st, a);
  if (lower_conv_measured(d)) return;
  const NodeState::ColumnBlocks& blocks = d.ops();
  const Shape& xs = a.xs;
  const std::size_t rank = a.rank, h = d.h;
  i64 batch = xs[0], out_depth = 1;
  int conv_in = a.x;
  if (rank == 3) {
    out_depth = shape_rules::window_output(xs[2], d.kd, d.depth.stride, d.depth.padding, d.depth.dilation).value_or(0);
    if (out_depth <= 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input depth " + std::to_string(xs[2]) + " is smaller than the kernel");
    batch = xs[0] * out_depth;
    const bool plain_slices = d.kd == 1 && d.depth.stride == 1 && d.depth.padding == 0;
    if (!plain_slices) {
      const int u = cx.new_tensor(Shape{batch, d.kd * a.in_channels, xs[3], xs[4]}, true);
      const i64 nb = xs[0], d_in = xs[2], pixels = xs[3] * xs[4], groups = a.groups, cg = d.cg;
      const int x = a.x;
      const kernels::Window depth = d.depth;
      Step& step = cx.add_step({x}, {u});
      step.run = [&cx, x, u, nb, d_in, out_depth, pixels, groups, cg, depth] {
        cx.parallel_slices(nb * out_depth, [&](i64 first, i64 count) {
          kernels::unfold_depth(cx.ptr(x), cx.ptr(u), nb, d_in, out_depth, pixels, groups, cg, depth, first, count);
        });
      };
      conv_in = u;
    }
  }
  const i64 in_h = xs[rank == 3 ? 3 : 2], in_w = xs[rank == 3 ? 4 : 3];
  // XNNPACK's sizes are unsigned: a window larger than the padded input would wrap.
  for (const auto& [size, k, axis] : {std::tuple{in_h, d.kh, h}, std::tuple{in_w, d.kw, h + 1}}) {
    if (!shape_rules::window_output(size, k, a.stride[axis], a.padding[axis], a.dilation[axis]))
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " is smaller than the kernel " + shape_str(a.w.shape()) +
                                          " (padded size " + std::to_string(size + 2 * a.padding[axis]) + ")");
  }
  // The output against the budget before XNNPACK sizes its buffers for it.
  const i64 expect_h = shape_rules::window_output(in_h, d.kh, a.stride[h], a.padding[h], a.dilation[h]).value_or(0);
  const i64 expect_w = shape_rules::window_output(in_w, d.kw, a.stride[h + 1], a.padding[h + 1], a.dilation[h + 1]).value_or(0);
  cx.within_budget(Shape{batch, d.out_channels, expect_h, expect_w});
  for (std::size_t k = 0; k < blocks.ops.size(); ++k) cx.reserve_indirection(n, expect_h, expect_w / d.fold, d.kh * d.fold_kw);  // one per operator
  std::size_t oh = 0, ow = 0;
  cx.reserve_workspace(d.reshape(blocks, batch, in_h, in_w, oh, ow));
  Shape out_shape = rank == 3 ? Shape{xs[0], d.out_channels, out_depth, static_cast<i64>(oh), static_cast<i64>(ow)}
                              : Shape{xs[0], d.out_channels, static_cast<i64>(oh), static_cast<i64>(ow)};
  const int out = cx.new_tensor(std::move(out_shape), true);
  std::vector<xnn_operator_t> ops;
  for (const XnnOp& op : blocks.ops) ops.push_back(op.op);
  Step& step = cx.add_step({conv_in}, {out});
  step.setup = [&cx, ops, block = d.block(), conv_in, out, &n] {
    for (std::size_t k = 0; k < ops.size(); ++k)
      cx.check(xnn_setup_convolution2d_nhwc_f32(ops[k], cx.workspace(), cx.ptr(conv_in), cx.ptr(out) + static_cast<i64>(k) * block), n, "setting up a convolution");
  };
  step.xnnpack = true;
  step.column_blocks = d.block_width ? static_cast<int>(ops.size()) : 0;
  step.pixel_fold = static_cast<int>(d.fold);
  step.run = [&cx, ops, &n] {
    for (xnn_operator_t op : ops) cx.check(xnn_run_operator(op, cx.pool()), n, "running a convolution");
  };
  post_activation(cx, n, st, 1, a.fused, out);
  cx.define(n.outputs[0], out);
}

// The portable transposed convolution, in torch's layout: for a geometry
// XNNPACK's operator refuses (padding past what its output size rule takes).
void lower_conv_transpose_portable(Context& cx, const Node& n, NodeState& st, const ConvArgs& a, i64 out_channels) {
  const Shape& xs = a.xs;
  portable::ConvTranspose c;
  c.batch = xs[0], c.in_channels = a.in_channels, c.out_channels = out_channels, c.groups = a.groups;
  Shape out_shape{xs[0], out_channels};
  for (std::size_t i = 0; i < a.rank; ++i) {
    c.in.push_back(xs[2 + i]);
    c.out.push_back(shape_rules::transposed_output(xs[2 + i], a.kernel[i], a.stride[i], a.padding[i], a.dilation[i], a.output_padding[i]));
    if (c.out.back() <= 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": output size " + std::to_string(c.out.back()));
    out_shape.push_back(c.out.back());
  }
  c.kernel = a.kernel, c.stride = a.stride, c.padding = a.padding, c.dilation = a.dilation;
  cx.within_budget(out_shape);
  const int out = cx.new_tensor(out_shape, false);
  const float* wp = a.w.data_as<float>();
  const float* bp = a.b.defined() ? a.b.data_as<float>() : nullptr;
  cx.portable_map(a.x, out, [c, wp, bp](const float* in, float* y) { portable::conv_transpose(c, in, wp, bp, y); });
  post_clamp(cx, n, st, 3, a.fused, out);  // numbers of their own: the XNNPACK paths' are 1 and 2
  post_activation(cx, n, st, 4, a.fused, out);
  cx.define(n.outputs[0], out);
}

// A 2D or 3D transposed convolution: a GEMM where the taps do not overlap,
// else XNNPACK's deconvolution (3D: the depth taps as stacked output
// channels, scattered into their slices), else the portable kernel.
void lower_conv_transposed(Context& cx, const Node& n, NodeState& st, const ConvArgs& a) {
  // torch's weight is [g*cg][cog][k...].
  const Shape& ws = a.w.shape();
  const Shape& xs = a.xs;
  const std::size_t rank = a.rank;
  const std::vector<i64>& stride = a.stride;
  const std::vector<i64>& padding = a.padding;
  const std::vector<i64>& dilation = a.dilation;
  const std::vector<i64>& output_padding = a.output_padding;
  const i64 groups = a.groups, in_channels = a.in_channels;
  const i64 cg = in_channels / groups, cog = ws[1], out_channels = cog * groups;
  if (ws[0] != in_channels) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": weight " + shape_str(ws) + " for " + std::to_string(in_channels) + " input channels");
  if (a.b.defined() && a.b.numel() != out_channels) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": bias " + shape_str(a.b.shape()) + " for " + std::to_string(out_channels) + " output channels");
  bool taps_apart = groups == 1;  // every output pixel from one tap of one input pixel
  for (std::size_t i = 0; i < rank; ++i)
    taps_apart = taps_apart && stride[i] == a.kernel[i] && padding[i] == 0 && dilation[i] == 1 && output_padding[i] == 0;
  if (taps_apart) return lower_conv_transpose_as_gemm(cx, n, st, a.x, a.w, a.b, a.fused);
  const i64 kd = rank == 3 ? ws[2] : 1;
  const i64 kh = ws[rank == 3 ? 3 : 2], kw = ws[rank == 3 ? 4 : 3];
  const std::size_t h = rank == 3 ? 1 : 0;
  const kernels::Window depth{kd, rank == 3 ? stride[0] : 1, rank == 3 ? padding[0] : 0, rank == 3 ? dilation[0] : 1};
  // In 3D the depth taps become stacked output channels [g][kd][cog], and a
  // scatter puts each in its output slice, adding the bias.
  const bool bias_in_op = rank == 2;
  if (st.ops.empty()) {
    const i64 group_out = kd * cog;
    std::vector<float> packed(static_cast<std::size_t>(a.w.numel()));
    const float* src = a.w.data_as<float>();
    for (i64 g = 0; g < groups; ++g)
      for (i64 c = 0; c < cg; ++c)
        for (i64 o = 0; o < cog; ++o)
          for (i64 d = 0; d < kd; ++d)
            for (i64 y = 0; y < kh; ++y)
              for (i64 x2 = 0; x2 < kw; ++x2)
                packed[static_cast<std::size_t>((((g * group_out + d * cog + o) * kh + y) * kw + x2) * cg + c)] =
                    src[((((g * cg + c) * cog + o) * kd + d) * kh + y) * kw + x2];
    st.ops.emplace_back();
    cx.check(xnn_create_deconvolution2d_nhwc_f32(
                 u32(padding[h]), u32(padding[h + 1]),
                 u32(padding[h]), u32(padding[h + 1]),
                 u32(kh), u32(kw), u32(stride[h]),
                 u32(stride[h + 1]), u32(dilation[h]),
                 u32(dilation[h + 1]), u32(groups), static_cast<std::size_t>(cg),
                 static_cast<std::size_t>(group_out), static_cast<std::size_t>(in_channels),
                 static_cast<std::size_t>(group_out * groups), packed.data(),
                 bias_in_op && a.b.defined() ? a.b.data_as<float>() : nullptr, bias_in_op ? a.fused.min : -kInf,
                 bias_in_op ? a.fused.max : kInf, 0, nullptr, nullptr, &st.ops[0].op),
             n, "creating a transposed convolution");
  }
  xnn_operator_t op = st.ops[0].op;
  const i64 batch = rank == 3 ? xs[0] * xs[2] : xs[0];
  const i64 in_h = xs[rank == 3 ? 3 : 2], in_w = xs[rank == 3 ? 4 : 3];
  {  // the output against the budget before XNNPACK sizes its buffers for it
    const i64 expect_h = std::max<i64>(shape_rules::transposed_output(in_h, kh, stride[h], padding[h], dilation[h], output_padding[h]), 0);
    const i64 expect_w = std::max<i64>(shape_rules::transposed_output(in_w, kw, stride[h + 1], padding[h + 1], dilation[h + 1], output_padding[h + 1]), 0);
    cx.within_budget(Shape{batch, kd * out_channels, expect_h, expect_w});
    cx.reserve_indirection(n, expect_h, expect_w, kh * kw);
  }
  std::size_t oh = 0, ow = 0;
  const xnn_status reshaped = xnn_reshape_deconvolution2d_nhwc_f32(op, static_cast<std::size_t>(batch), static_cast<std::size_t>(in_h), static_cast<std::size_t>(in_w),
                                                                  u32(output_padding[h]), u32(output_padding[h + 1]), &oh, &ow, cx.pool());
  if (reshaped == xnn_status_invalid_parameter) return lower_conv_transpose_portable(cx, n, st, a, out_channels);
  cx.check(reshaped, n, "reshaping a transposed convolution");
  const int x = a.x;
  const int y = rank == 2 ? cx.new_tensor(Shape{xs[0], out_channels, static_cast<i64>(oh), static_cast<i64>(ow)}, true)
                          : cx.new_tensor(Shape{batch, kd * out_channels, static_cast<i64>(oh), static_cast<i64>(ow)}, true);
  Step& step = cx.add_step({x}, {y});
  step.setup = [&cx, op, x, y, &n] { cx.check(xnn_setup_deconvolution2d_nhwc_f32(op, cx.ptr(x), cx.ptr(y)), n, "setting up a transposed convolution"); };
  step.xnnpack = true;
  step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running a transposed convolution"); };
  if (rank == 2) {
    post_activation(cx, n, st, 1, a.fused, y);
    return cx.define(n.outputs[0], y);
  }
  const i64 out_depth = shape_rules::transposed_output(xs[2], kd, depth.stride, depth.padding, depth.dilation, output_padding[0]);
  if (out_depth <= 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": output depth " + std::to_string(out_depth));
  const int out = cx.new_tensor(Shape{xs[0], out_channels, out_depth, static_cast<i64>(oh), static_cast<i64>(ow)}, true);
  const float* bias = a.b.defined() ? a.b.data_as<float>() : nullptr;
  const i64 nb = xs[0], d_in = xs[2], pixels = static_cast<i64>(oh * ow);
  Step& scatter = cx.add_step({y}, {out});
  scatter.run = [&cx, y, out, bias, nb, d_in, out_depth, pixels, groups, cog, depth] {
    cx.parallel_slices(nb * out_depth, [&](i64 first, i64 count) {
      kernels::scatter_depth(cx.ptr(y), cx.ptr(out), bias, nb, d_in, out_depth, pixels, groups, cog, depth, first, count);
    });
  };
  post_clamp(cx, n, st, 1, a.fused, out);
  post_activation(cx, n, st, 2, a.fused, out);
  cx.define(n.outputs[0], out);
}

}  // namespace

// Reads and checks what every convolution shares, then the 1D, direct or
// transposed lowering.
void lower_conv(Context& cx, const Node& n, NodeState& st) {
  const std::string base = base_op(n.op);
  const Tensor& w = cx.constant_arg(n, "weight", 1, true);
  const Tensor& b = cx.constant_arg(n, "bias", 2, false);
  const bool transposed = base == "_convolution" || base == "convolution" ? cx.int_arg(n, "transposed").value_or(0) != 0
                                                                          : base.rfind("conv_transpose", 0) == 0;
  if (w.dim() == 3 && !transposed) return lower_conv1d(cx, n, st);
  if (w.dim() != 4 && w.dim() != 5) fail(ErrorCode::kUnsupported, cx.where(n) + ": only 1D, 2D and 3D convolutions and 2D and 3D transposed ones run here (weight " + shape_str(w.shape()) + ")");
  const std::size_t rank = static_cast<std::size_t>(w.dim() - 2);
  const int x0 = cx.tensor_arg(n, "input", 0);
  if (cx.slot(x0).shape.size() == rank + 1) return lower_as_batch_of_one(cx, n, st, &lower_conv, "input", 0);
  const auto stride = cx.spatial_arg(n, "stride", rank, 1);
  const auto dilation = cx.spatial_arg(n, "dilation", rank, 1);
  const auto output_padding = cx.spatial_arg(n, "output_padding", rank, 0);
  const std::vector<i64> kernel(w.shape().begin() + 2, w.shape().end());
  std::vector<i64> padding;
  const int x = cx.as_layout(as_padded(cx, n, x0, kernel, stride, dilation, padding), true);
  const Shape xs = cx.slot(x).shape;
  if (xs.size() != rank + 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " for a " + std::to_string(rank) + "D convolution");
  cx.within_geometry(n, {{"stride", &stride}, {"padding", &padding}, {"dilation", &dilation}, {"output_padding", &output_padding}, {"kernel", &kernel}});
  const i64 groups = cx.int_arg(n, "groups").value_or(1);
  const i64 in_channels = xs[1];
  if (groups <= 0 || in_channels % groups) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + std::to_string(in_channels) + " input channels in " + std::to_string(groups) + " groups");
  const ConvArgs a{w, b, rank, x, xs, stride, dilation, output_padding, kernel, padding, groups, in_channels, cx.fused_of(n)};
  if (transposed) lower_conv_transposed(cx, n, st, a);
  else lower_conv_direct(cx, n, st, a);
}


void lower_conv_transpose_as_gemm(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const Fused& fused) {
  const Shape xs = cx.slot(x).shape, ws = w.shape();
  const std::size_t rank = xs.size() - 2;
  const i64 in_channels = xs[1], out_channels = ws[1];
  i64 in[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  for (std::size_t i = 0; i < rank; ++i) in[3 - rank + i] = xs[2 + i], kernel[3 - rank + i] = ws[2 + i];
  const i64 taps = kernel[0] * kernel[1] * kernel[2], pixels = xs[0] * in[0] * in[1] * in[2], columns = taps * out_channels;
  Shape out_shape{xs[0], out_channels};
  for (std::size_t i = 0; i < rank; ++i) out_shape.push_back(xs[2 + i] * ws[2 + i]);
  cx.within_budget(out_shape);
  // y [pixels][taps][out_channels] = x [pixels][in_channels] times W, whose
  // row for (tap, o) is torch's weight [in_channels][o][tap]; the bias and
  // clamp per element already (each output element is one tap's).
  const int y = cx.new_tensor(Shape{pixels, columns}, false);
  gemm_step(cx, n, st, 0, x, y, pixels, in_channels, columns, [&](i64 first, i64 count, xnn_operator_t* op) {
    std::vector<float> rows(static_cast<std::size_t>(count * in_channels)), bias;
    const float* src = w.data_as<float>();
    for (i64 r = 0; r < count; ++r) {
      const i64 tap = (first + r) / out_channels, o = (first + r) % out_channels;
      for (i64 c = 0; c < in_channels; ++c) rows[static_cast<std::size_t>(r * in_channels + c)] = src[(c * out_channels + o) * taps + tap];
    }
    if (b.defined())
      for (i64 r = 0; r < count; ++r) bias.push_back(b.data_as<float>()[(first + r) % out_channels]);
    cx.check(xnn_create_fully_connected_nc_f32(static_cast<std::size_t>(in_channels), static_cast<std::size_t>(count), static_cast<std::size_t>(in_channels),
                                            static_cast<std::size_t>(columns), rows.data(), bias.empty() ? nullptr : bias.data(), fused.min, fused.max, 0,
                                            nullptr, nullptr, op),
          n, "creating a transposed convolution's GEMM");
  });
  const int out = cx.new_tensor(std::move(out_shape), true);
  Step& step = cx.add_step({y}, {out});
  const i64 nb = xs[0];
  const std::array<i64, 3> in_a{in[0], in[1], in[2]}, kernel_a{kernel[0], kernel[1], kernel[2]};
  step.run = [&cx, y, out, nb, in_a, kernel_a, out_channels] {
    cx.parallel_slices(nb * in_a[0] * kernel_a[0] * in_a[1] * kernel_a[1], [&](i64 first, i64 count) {
      kernels::taps_to_space(cx.ptr(y), cx.ptr(out), nb, in_a.data(), kernel_a.data(), out_channels, first, count);
    });
  };
  post_activation(cx, n, st, 1, fused, out);
  cx.define(n.outputs[0], out);
}

namespace {

// Measured choices for depthwise convolutions, for the process: by shape,
// stride, padding and threads; true where ours is faster.
MeasuredChoices depthwise_choices;

// A measurement's input: n floats in [-0.5, 0.5), the same every time.
AlignedFloats trial_input(i64 n) {
  AlignedFloats x = aligned_floats(sizeof(float) * static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
  return x;
}

// XNNPACK's run of a node against ours, on the same buffers: each warmed up
// (warm_up(), by the kind of convolution) and run once untimed, then the
// best of five taking turns (the other thread's wake-ups make single runs
// at two threads noisy). True where ours is faster by more than 5% (a tie
// keeps XNNPACK's).
bool ours_faster(const std::string& kind, const std::function<void()>& xnnpack, const std::function<void()>& ours) {
  warm_up("XNNPACK's " + kind, xnnpack);
  warm_up("our " + kind, ours);
  xnnpack();
  ours();
  double best_xnnpack = 1e30, best_ours = 1e30;
  for (int round = 0; round < 5; ++round) {
    best_xnnpack = std::min(best_xnnpack, seconds_of(xnnpack));
    best_ours = std::min(best_ours, seconds_of(ours));
  }
  return best_ours < 0.95 * best_xnnpack;
}

}  // namespace

bool lower_depthwise(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& stride,
                                           const std::vector<i64>& padding, const Fused& fused, const DirectRun& direct) {
  if (cx.options().conv_algorithm != ConvAlgorithm::kFastest) return false;
  const Shape xs = cx.slot(x).shape;
  depthwise::Conv d;
  d.batch = xs[0], d.channels = xs[1], d.in_h = xs[2], d.in_w = xs[3];
  d.stride_h = stride[0], d.stride_w = stride[1], d.pad_h = padding[0], d.pad_w = padding[1];
  d.out_h = shape_rules::window_output(d.in_h, 3, d.stride_h, d.pad_h, 1).value_or(0);
  d.out_w = shape_rules::window_output(d.in_w, 3, d.stride_w, d.pad_w, 1).value_or(0);
  if (d.out_h <= 0 || d.out_w <= 0) return false;  // XNNPACK's path says why
  const Shape out_shape{d.batch, d.channels, d.out_h, d.out_w};
  cx.within_budget(out_shape);
  // Our kernel at the widest width the CPU has; weights [9][C padded to its
  // lanes] from torch's [C][1][3][3], the bias padded alike.
  const conv::Kernels* k = &conv::widest_kernels();
  const i64 padded = depthwise::padded_channels(d.channels, k->lanes);
  auto weights = std::make_shared<std::vector<float>>(static_cast<std::size_t>(10 * padded), 0.0f);
  const float* src = w.data_as<float>();
  for (i64 c = 0; c < d.channels; ++c) {
    for (i64 t = 0; t < 9; ++t) (*weights)[static_cast<std::size_t>(t * padded + c)] = src[c * 9 + t];
    if (b.defined()) (*weights)[static_cast<std::size_t>(9 * padded + c)] = b.data_as<float>()[c];
  }
  const float min = fused.min, max = fused.max;
  auto run = [&cx, k, d, weights, padded, min, max](const float* in, float* out) {
    cx.parallel_slices(d.batch * d.out_h, [&](i64 first, i64 count) {
      k->depthwise(in, out, weights->data(), weights->data() + 9 * padded, d, min, max, first, count);
    });
  };
  std::vector<i64> key{d.batch, d.channels, d.in_h, d.in_w, d.stride_h, d.stride_w, d.pad_h, d.pad_w, cx.threads()};
  std::optional<bool> ours;
  if (const std::optional<i64> known = depthwise_choices.find(key)) ours = *known != 0;
  if (!ours) {
    // Both on the real shape (a depthwise convolution is cheap).
    const double bytes = 4.0 * static_cast<double>(d.batch * d.channels) * static_cast<double>(d.in_h * d.in_w + d.out_h * d.out_w);
    ours = false;
    if (bytes <= static_cast<double>(cx.memory_budget()) / 4) {
      AlignedFloats xm = trial_input(d.batch * d.channels * d.in_h * d.in_w);
      AlignedFloats ym = aligned_floats(sizeof(float) * static_cast<std::size_t>(d.batch * d.channels * d.out_h * d.out_w));
      const i64 sizes[2] = {d.in_h, d.in_w};
      ours = ours_faster("depthwise", [&] { direct(xm.get(), ym.get(), d.batch, sizes); }, [&] { run(xm.get(), ym.get()); });
    }
    depthwise_choices.put(key, *ours);
  }
  if (!*ours) return false;
  st.columns.clear();  // XNNPACK's packed weights, made for the measurement
  const int out = cx.new_tensor(out_shape, true);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, run, x, out] { run(cx.ptr(x), cx.ptr(out)); };
  post_activation(cx, n, st, 1, fused, out);
  cx.define(n.outputs[0], out);
  return true;
}

namespace {

// Measured choices for 1x1 convolutions, for the process: by shape and
// threads; true where our GEMM (at the widest lanes) is faster.
MeasuredChoices pointwise_choices;

// A measurement crops the pixels so that the input and output are about this
// large (still past the caches, as the real ones may be).
constexpr i64 kPointwiseMeasureBytes = i64{8} << 20;

}  // namespace

bool lower_pointwise_conv(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const Fused& fused,
                                           const DirectRun& direct) {
  if (cx.options().conv_algorithm != ConvAlgorithm::kFastest) return false;
  const Shape xs = cx.slot(x).shape;
  const std::size_t rank = xs.size() - 2;
  const i64 batch = xs[0], in_channels = xs[1], out_channels = w.shape()[0];
  i64 pixels = batch;
  for (std::size_t axis = 2; axis < xs.size(); ++axis) pixels *= xs[axis];
  if (pixels <= 0) return false;
  Shape out_shape = xs;
  out_shape[1] = out_channels;
  cx.within_budget(out_shape);
  auto p = std::make_shared<pointwise::Conv>();
  p->in_channels = in_channels, p->out_channels = out_channels, p->min = fused.min, p->max = fused.max;
  // Our GEMM at the widest width the CPU has (narrower ones measured slower on
  // every bench shape); its weights packed once, for the measurement and the run.
  const conv::Kernels* k = &conv::widest_kernels();
  std::shared_ptr<std::vector<float>> packed;
  auto pack = [&] {
    if (!packed)
      packed = std::make_shared<std::vector<float>>(
          pointwise::pack(w.data_as<float>(), b.defined() ? b.data_as<float>() : nullptr, in_channels, out_channels, k->panel));
    return packed->data();
  };
  std::vector<i64> key{in_channels, out_channels, pixels, cx.threads()};
  std::optional<bool> ours;
  if (const std::optional<i64> known = pointwise_choices.find(key)) ours = *known != 0;
  if (!ours) {
    // Batch 1 with the outermost spatial axis cropped to about
    // kPointwiseMeasureBytes of input and output: every pixel costs alike.
    i64 sizes[3] = {0, 0, 0}, cropped = 1;
    for (std::size_t axis = 0; axis < rank; ++axis) sizes[axis] = xs[axis + 2];
    i64 inner = 1;
    for (std::size_t axis = 1; axis < rank; ++axis) inner *= sizes[axis];
    const i64 pixel_bytes = (in_channels + out_channels) * static_cast<i64>(sizeof(float));
    sizes[0] = std::max<i64>(1, std::min(sizes[0], kPointwiseMeasureBytes / std::max<i64>(pixel_bytes * inner, 1)));
    cropped = sizes[0] * inner;
    ours = false;
    if (2.0 * static_cast<double>(cropped) * static_cast<double>(pixel_bytes) <= static_cast<double>(cx.memory_budget()) / 4) {
      AlignedFloats xm = trial_input(cropped * in_channels);
      AlignedFloats ym = aligned_floats(sizeof(float) * static_cast<std::size_t>(cropped * out_channels));
      const float* trial = pack();
      ours = ours_faster("1x1", [&] { direct(xm.get(), ym.get(), 1, sizes); },
                         [&] { pointwise::run(*k, *p, trial, xm.get(), ym.get(), cropped, cx.pool()); });
    }
    pointwise_choices.put(key, *ours);
  }
  if (!*ours) return false;
  st.columns.clear();  // XNNPACK's packed weights, made for the measurement
  pack();
  const int out = cx.new_tensor(std::move(out_shape), true);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, k, p, packed, x, out, pixels] { pointwise::run(*k, *p, packed->data(), cx.ptr(x), cx.ptr(out), pixels, cx.pool()); };
  post_activation(cx, n, st, 1, fused, out);
  cx.define(n.outputs[0], out);
  return true;
}

namespace {

// Measured choices for unfolded convolutions, for the process: by shape,
// kernel, stride, padding, dilation and threads; true where ours is faster.
MeasuredChoices unfolded_choices;

}  // namespace

bool lower_unfolded(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& stride,
                                          const std::vector<i64>& padding, const std::vector<i64>& dilation, const Fused& fused,
                                          const DirectRun& direct) {
  if (cx.options().conv_algorithm != ConvAlgorithm::kFastest) return false;
  const Shape xs = cx.slot(x).shape;
  const std::size_t rank = xs.size() - 2, skip = 3 - rank;  // 2D: D = 1
  const i64 out_channels = w.shape()[0];
  auto u = std::make_shared<unfolded::Conv>();
  u->batch = xs[0], u->channels = xs[1];
  for (std::size_t axis = 0; axis < rank; ++axis) {
    u->in[axis + skip] = xs[axis + 2], u->kernel[axis + skip] = w.shape()[axis + 2];
    u->stride[axis + skip] = stride[axis], u->padding[axis + skip] = padding[axis], u->dilation[axis + skip] = dilation[axis];
  }
  if (!u->make_output()) return false;  // XNNPACK's path says why
  Shape out_shape{u->batch, out_channels};
  for (std::size_t axis = 0; axis < rank; ++axis) out_shape.push_back(u->out[axis + skip]);
  cx.within_budget(out_shape);
  auto p = std::make_shared<pointwise::Conv>();
  p->in_channels = u->row(), p->out_channels = out_channels, p->min = fused.min, p->max = fused.max;
  const conv::Kernels* k = &conv::widest_kernels();
  const int threads = static_cast<int>(std::max<std::size_t>(pthreadpool_get_threads_count(cx.pool()), 1));
  auto packed = std::make_shared<std::vector<float>>(
      unfolded::pack(*u, w.data_as<float>(), b.defined() ? b.data_as<float>() : nullptr, out_channels, k->panel));
  std::vector<i64> key{u->batch, u->channels, out_channels, cx.threads()};
  for (int axis = 0; axis < 3; ++axis) key.insert(key.end(), {u->in[axis], u->kernel[axis], u->stride[axis], u->padding[axis], u->dilation[axis]});
  std::optional<bool> ours;
  if (const std::optional<i64> known = unfolded_choices.find(key)) ours = *known != 0;
  if (!ours) {
    // Batch 1, the outermost spatial axis cropped to about
    // kPointwiseMeasureBytes of input and output: every output row costs alike.
    unfolded::Conv trial = *u;
    trial.batch = 1;
    const int outer = static_cast<int>(skip);  // D in 3D, H in 2D
    i64 row_bytes = (out_channels * trial.out[2] + trial.channels * trial.in[2] * trial.stride[outer]) * static_cast<i64>(sizeof(float));
    if (rank == 3) row_bytes *= trial.out[1];
    const i64 rows = std::max<i64>(1, kPointwiseMeasureBytes / std::max<i64>(row_bytes, 1));
    const i64 extent = trial.dilation[outer] * (trial.kernel[outer] - 1) + 1;
    trial.in[outer] = std::min(trial.in[outer], std::max<i64>((rows - 1) * trial.stride[outer] + extent, 1));
    ours = false;
    if (trial.make_output()) {
      const i64 in_numel = trial.in[0] * trial.in[1] * trial.in[2] * trial.channels, out_numel = trial.pixels() * out_channels;
      const i64 scratch_numel = unfolded::chunk_pixels(trial) * trial.row() * threads;
      // With what XNNPACK's direct run allocates: its indirection buffer (a
      // pointer per tap and output pixel) and, in 3D, the input unfolded along depth.
      double bytes = 4.0 * static_cast<double>(in_numel + out_numel + scratch_numel) +
                     static_cast<double>(sizeof(void*)) * static_cast<double>(trial.pixels()) * static_cast<double>(trial.kernel[1] * trial.kernel[2]);
      if (rank == 3) bytes += 4.0 * static_cast<double>(trial.out[0]) * static_cast<double>(trial.in[1] * trial.in[2] * trial.row() / trial.kernel[1] / trial.kernel[2]);
      if (bytes <= static_cast<double>(cx.memory_budget()) / 4) {
        AlignedFloats xm = trial_input(in_numel);
        AlignedFloats ym = aligned_floats(sizeof(float) * static_cast<std::size_t>(out_numel));
        AlignedFloats sm = aligned_floats(sizeof(float) * static_cast<std::size_t>(scratch_numel));
        const i64 sizes[3] = {trial.in[skip], trial.in[skip + 1], rank == 3 ? trial.in[2] : 0};
        ours = ours_faster("unfolded convolution", [&] { direct(xm.get(), ym.get(), 1, sizes); },
                           [&] { unfolded::run(*k, trial, *p, packed->data(), xm.get(), ym.get(), sm.get(), cx.pool()); });
      }
    }
    unfolded_choices.put(key, *ours);
  }
  if (!*ours) return false;
  st.columns.clear();  // XNNPACK's packed weights, made for the measurement
  const int out = cx.new_tensor(std::move(out_shape), true);
  const int scratch = cx.new_tensor(Shape{threads, unfolded::chunk_pixels(*u), u->row()}, false);
  Step& step = cx.add_step({x}, {out, scratch});
  step.run = [&cx, k, u, p, packed, x, out, scratch] { unfolded::run(*k, *u, *p, packed->data(), cx.ptr(x), cx.ptr(out), cx.ptr(scratch), cx.pool()); };
  post_activation(cx, n, st, 1, fused, out);
  cx.define(n.outputs[0], out);
  return true;
}

void lower_conv1d(Context& cx, const Node& n, NodeState& st) {
  const Tensor& w = cx.constant_arg(n, "weight", 1, true);
  const Tensor& b = cx.constant_arg(n, "bias", 2, false);
  const int x0 = cx.tensor_arg(n, "input", 0);
  if (cx.slot(x0).shape.size() == 2 && w.dim() == 3) return lower_as_batch_of_one(cx, n, st, &lower_conv1d, "input", 0);
  if (w.dim() != 3) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": weight " + shape_str(w.shape()) + " for a 1D convolution");
  std::vector<i64> padding;
  const int x = as_padded(cx, n, x0, {w.shape()[2]}, cx.spatial_arg(n, "stride", 1, 1), cx.spatial_arg(n, "dilation", 1, 1), padding);
  const Shape xs = cx.slot(x).shape;
  if (xs.size() != 3) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + ", weight " + shape_str(w.shape()) + " for a 1D convolution");
  portable::Conv1d c{};
  c.batch = xs[0];
  c.in_channels = xs[1];
  c.in_length = xs[2];
  c.out_channels = w.shape()[0];
  c.kernel = w.shape()[2];
  c.groups = cx.int_arg(n, "groups").value_or(1);
  c.stride = cx.spatial_arg(n, "stride", 1, 1)[0];
  c.dilation = cx.spatial_arg(n, "dilation", 1, 1)[0];
  c.padding = padding[0];
  if (c.groups <= 0 || c.in_channels % c.groups || c.out_channels % c.groups || w.shape()[1] * c.groups != c.in_channels)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": weight " + shape_str(w.shape()) + " with groups=" + std::to_string(c.groups) + " for " + std::to_string(c.in_channels) + " input channels");
  if (c.stride <= 0 || c.dilation <= 0 || c.padding < 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": stride, dilation must be positive and padding not negative");
  if (b.defined() && b.numel() != c.out_channels) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": bias " + shape_str(b.shape()));
  const std::optional<i64> out_length = shape_rules::window_output(c.in_length, c.kernel, c.stride, c.padding, c.dilation);
  if (!out_length) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": kernel larger than the padded input of " + std::to_string(c.in_length));
  c.out_length = *out_length;
  const int out = cx.new_tensor({c.batch, c.out_channels, c.out_length}, false);
  const float* wp = w.data_as<float>();
  const float* bp = b.defined() ? b.data_as<float>() : nullptr;
  cx.portable_map(x, out, [c, wp, bp](const float* in, float* y) { portable::conv1d(c, in, wp, bp, y); });
  post_activation(cx, n, st, 0, cx.fused_of(n), out);
  post_clamp(cx, n, st, 1, cx.fused_of(n), out);
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
