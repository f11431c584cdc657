// GEMMs on XNNPACK's fully connected operator, in blocks of output columns
// whose packed weights stay in the L2 cache.
#include "lower/gemm.h"

namespace tracegraph::xnnpack {

namespace {

// Column blocks whose packed weights take about this much of the L2 cache
// (measured on 2D convolutions and linears of 2.4 to 9.4 MB: best between
// 256 KB and 1.2 MB, natively 0.55-0.9x the time of one operator).
constexpr i64 kColumnBlockBytes = i64{512} << 10;

// Weight matrices up to this size (the L2 cache of a core here) stay whole:
// 1.4 and 1.7 MB measured 0.95-1.1x in blocks.
constexpr i64 kWholeWeightBytes = i64{2} << 20;

// Blocks are whole multiples of this many channels: 16 or 48 wide measured
// up to 2x slower than 32 or 64 on the same convolutions.
constexpr i64 kColumnBlockStep = 32;

// Fewer rows than this are four or fewer of XNNPACK's row tiles: little to
// save, and in a graph 16 rows (resnet18's third stage at 64x64) ran 1.18x
// slower in blocks; 49 rows (its fourth stage at 224x224) 0.6-0.7x.
constexpr i64 kMinBlockedRows = 32;

}  // namespace

i64 column_block_width(i64 rows, i64 depth, i64 columns) {
  const i64 row_bytes = depth * static_cast<i64>(sizeof(float));  // one output column's weights
  if (rows < kMinBlockedRows || row_bytes <= 0 || columns <= kWholeWeightBytes / row_bytes) return 0;
  const i64 width = std::max<i64>(1, kColumnBlockBytes / row_bytes / kColumnBlockStep) * kColumnBlockStep;
  return width < columns ? width : 0;
}

NodeState::ColumnBlocks& column_blocks(
    NodeState& st, std::size_t index, i64 width, i64 columns, const std::function<void(i64, i64, xnn_operator_t*)>& make) {
  NodeState::ColumnBlocks& blocks = st.columns[index];
  if (!blocks.ops.empty() && blocks.width == width) return blocks;
  blocks.ops.clear();  // another width: the old blocks' packed weights go first
  std::vector<XnnOp> ops;
  const i64 block = std::max<i64>(width ? width : columns, 1);
  for (i64 first = 0; first == 0 || first < columns; first += block) {
    ops.emplace_back();
    make(first, std::min(block, columns - first), &ops.back().op);
  }
  blocks.ops = std::move(ops);
  blocks.width = width;
  return blocks;
}

int fully_connected(Context& cx, const Node& n, NodeState& st, std::size_t index, int x, const float* w, const float* b, i64 in_features,
                    i64 out_features, float out_min, float out_max) {
  x = cx.as_layout(x, false);
  const Shape xs = cx.slot(x).shape;
  const i64 batch = numel(xs) / std::max<i64>(in_features, 1);
  Shape out_shape = xs;
  out_shape.back() = out_features;
  const int out = cx.new_tensor(out_shape, false);
  gemm_step(cx, n, st, index, x, out, batch, in_features, out_features, [&](i64 first, i64 count, xnn_operator_t* op) {
    cx.check(xnn_create_fully_connected_nc_f32(static_cast<std::size_t>(in_features), static_cast<std::size_t>(count),
                                            static_cast<std::size_t>(in_features), static_cast<std::size_t>(out_features), w + first * in_features,
                                            b ? b + first : nullptr, out_min, out_max, 0, nullptr, nullptr, op),
          n, "creating a fully connected op");
  });
  return out;
}

void gemm_step(Context& cx, const Node& n, NodeState& st, std::size_t index, int x, int out, i64 rows, i64 depth, i64 columns,
                                     const std::function<void(i64, i64, xnn_operator_t*)>& make) {
  const NodeState::ColumnBlocks& blocks = column_blocks(st, index, column_block_width(rows, depth, columns), columns, make);
  const i64 block = blocks.width ? blocks.width : columns;
  std::vector<xnn_operator_t> ops;
  for (const XnnOp& op : blocks.ops) {
    cx.check(xnn_reshape_fully_connected_nc_f32(op.op, static_cast<std::size_t>(rows), cx.pool()), n, "reshaping a fully connected op");
    ops.push_back(op.op);
  }
  Step& step = cx.add_step({x}, {out});
  step.setup = [&cx, ops, block, x, out, &n] {
    for (std::size_t k = 0; k < ops.size(); ++k)
      cx.check(xnn_setup_fully_connected_nc_f32(ops[k], cx.ptr(x), cx.ptr(out) + static_cast<i64>(k) * block), n, "setting up a fully connected op");
  };
  step.xnnpack = true;
  step.column_blocks = blocks.width ? static_cast<int>(ops.size()) : 0;
  step.run = [&cx, ops, &n] {
    for (xnn_operator_t op : ops) cx.check(xnn_run_operator(op, cx.pool()), n, "running a fully connected op");
  };
}

}  // namespace tracegraph::xnnpack
