// GEMMs on XNNPACK's fully connected operator, in blocks of output columns
// (gemm.cpp): linear and addmm, attention's projections, the DFT matrices'
// products and convolutions computed as GEMMs.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// XNNPACK's GEMMs stream the whole packed weight matrix once per tile of
// rows (its microkernel's 1 to 8), so a matrix past the L2 cache,
// multiplied into many rows, comes from L3 or memory rows/8 times over.
// Split by output columns into blocks of about 512 KB, each block's
// weights stay in L2 across all rows (a GEMM's cache blocking).
// The width of the blocks for `rows` x `depth` times `depth` x `columns`,
// or 0: one operator.
i64 column_block_width(i64 rows, i64 depth, i64 columns);
// The node's operators number `index` over blocks of `width` output columns
// (0: one): `make(first, count, &op)` creates the one for columns
// [first, first + count). Made again when the width changes.
NodeState::ColumnBlocks& column_blocks(NodeState& st, std::size_t index, i64 width, i64 columns,
                                       const std::function<void(i64, i64, xnn_operator_t*)>& make);
// y = x @ w^T + b over x's last dim ([..., in] -> [..., out]): XNNPACK's
// fully connected op, the node's operator number `index` (weights packed
// once, on the first plan).
int fully_connected(Context& cx, const Node& n, NodeState& st, std::size_t index, int x, const float* w, const float* b, i64 in_features,
                    i64 out_features, float out_min = -kInf, float out_max = kInf);
// out[rows, columns] = x[rows, depth] times a weight matrix, on XNNPACK's
// fully connected operators number `index` (column_blocks(): `make`
// creates the one for some output columns, out's row stride `columns`).
void gemm_step(Context& cx, const Node& n, NodeState& st, std::size_t index, int x, int out, i64 rows, i64 depth, i64 columns,
               const std::function<void(i64, i64, xnn_operator_t*)>& make);

}  // namespace tracegraph::xnnpack
