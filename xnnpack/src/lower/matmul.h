// Matrix products (matmul.cpp): linear and addmm on XNNPACK's fully
// connected operator, matmul/mm/bmm on its batch matrix multiply, outer and
// baddbmm on portable steps.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

void lower_linear(Context& cx, const Node& n, NodeState& st);
// addmm(self, mat1, mat2, beta, alpha): beta * self + alpha * (mat1 @ mat2).
// With mat2 a weight [K, N], self its bias and both factors 1 (torch.export's
// linear: addmm(bias, x, permute(weight))) one fully connected operator, the
// weights packed once; else a batch matrix multiply and a step of ours.
void lower_addmm(Context& cx, const Node& n, NodeState& st);
// matmul / mm / bmm on XNNPACK's batch matrix multiply: [..., m, k] @
// [..., k, n], batch dims broadcast (numpy rules), 1-D operands as torch
// treats them (a row or a column, dropped from the result).
void lower_matmul(Context& cx, const Node& n, NodeState& st);
// C = A @ B on XNNPACK: A [a_batch..., m, k], B [b_batch..., k, n] (batch
// dims of equal count, broadcast), C of `out_shape` (c's elements in
// [batch..., m, n] order). The node's first XNNPACK operator is the one.
int batch_matmul(Context& cx, const Node& n, NodeState& st, int a, int b, const Shape& a_batch, const Shape& b_batch, i64 m, i64 k, i64 nn,
                 const Shape& out_shape);
// outer(self, vec2); baddbmm(self, batch1, batch2, beta, alpha), portable.
void lower_outer(Context& cx, const Node& n, NodeState&);
void lower_baddbmm(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
