// einsum (einsum.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// einsum of two operands as one batch matrix multiply: the letters in both
// operands and the output are batch dims, those in both operands only are
// summed over, the others are rows (first operand) and columns (second).
// Each operand is permuted to [batch, rows or columns, summed] order once.
void lower_einsum(Context& cx, const Node& n, NodeState& st);
// einsum of complex operands (neuraloperator's spectral convolutions, and
// matmul of complex operands): a real einsum over their (real, imaginary)
// pairs. `eq` without spaces.
void einsum_complex(Context& cx, const Node& n, NodeState& st, std::string eq, const std::vector<ValueId>& operands);

}  // namespace tracegraph::xnnpack
