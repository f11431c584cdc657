// Matrix products: linear and addmm (XNNPACK's fully connected operator),
// matmul/mm/bmm (its batch matrix multiply), outer and baddbmm (portable).
#include "lower/matmul.h"
#include "lower/broadcast.h"
#include "lower/einsum.h"
#include "lower/fused_activation.h"
#include "lower/gemm.h"

namespace tracegraph::xnnpack {

void lower_linear(Context& cx, const Node& n, NodeState& st) {
  const int x = cx.as_layout(cx.tensor_arg(n, "input", 0), false);
  const Tensor& w = cx.constant_arg(n, "weight", 1, true);
  const Tensor& b = cx.constant_arg(n, "bias", 2, false);
  const Shape xs = cx.slot(x).shape;
  if (w.dim() != 2 || xs.empty() || xs.back() != w.shape()[1])
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " and weight " + shape_str(w.shape()));
  const i64 in_features = w.shape()[1], out_features = w.shape()[0];
  if (b.defined() && b.numel() != out_features) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": bias " + shape_str(b.shape()));
  const Fused fused = cx.fused_of(n);
  const int out = fully_connected(cx, n, st, 0, x, w.data_as<float>(), b.defined() ? b.data_as<float>() : nullptr, in_features, out_features,
                                  fused.min, fused.max);
  post_activation(cx, n, st, 1, fused, out);
  cx.define(n.outputs[0], out);
}

namespace {

// addmm in general: beta * self (broadcast) + alpha * (mat1 @ mat2), on
// XNNPACK's batch matrix multiply and a step of ours.
void addmm_general(Context& cx, const Node& n, NodeState& st, int x, int m, double alpha, double beta) {
  const Shape xs = cx.slot(x).shape, ms = cx.slot(m).shape;
  const int product = batch_matmul(cx, n, st, x, m, {}, {}, xs[0], xs[1], ms[1], {xs[0], ms[1]});
  const Shape shape = cx.slot(product).shape;
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape);
  const auto a = static_cast<float>(alpha), b = static_cast<float>(beta);
  if (b == 0) {  // torch reads nothing of self then (its NaNs stay out)
    Step& step = cx.add_step({product}, {out});
    step.run = [&cx, product, out, count, a] {
      const float* p = cx.ptr(product);
      float* y = cx.ptr(out);
      for (i64 i = 0; i < count; ++i) y[i] = a * p[i];
    };
  } else {
    auto self = input_for_arg(n, "self", 0);
    const int c = broadcast_to(cx, cx.held_tensor_slot(n, *self), broadcast_shape(cx, n, cx.slot_of(*self).shape, shape));
    if (cx.slot(c).shape != shape) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": 'self' " + shape_str(cx.slot_of(*self).shape) + " for a product of " + shape_str(shape));
    Step& step = cx.add_step({product, c}, {out});
    step.run = [&cx, product, c, out, count, a, b] {
      const float* p = cx.ptr(product);
      const float* q = cx.ptr(c);
      float* y = cx.ptr(out);
      for (i64 i = 0; i < count; ++i) y[i] = b * q[i] + a * p[i];
    };
  }
  const Fused fused = cx.fused_of(n);
  post_clamp(cx, n, st, 1, fused, out);
  post_activation(cx, n, st, 2, fused, out);
  cx.define(n.outputs[0], out);
}

}  // namespace

void lower_addmm(Context& cx, const Node& n, NodeState& st) {
  const double alpha = cx.float_arg(n, "alpha").value_or(1), beta = cx.float_arg(n, "beta").value_or(1);
  const int x = cx.as_layout(cx.tensor_arg(n, "mat1", 1), false);
  const int m = cx.as_layout(cx.tensor_arg(n, "mat2", 2), false);
  const float* weights = cx.slot(m).constant;  // copied: new_tensor() below may move the slots
  const Shape ms = cx.slot(m).shape;
  const Shape xs = cx.slot(x).shape;
  if (ms.size() != 2 || xs.size() != 2 || xs[1] != ms[0])
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": mat1 " + shape_str(xs) + " and mat2 " + shape_str(ms));
  const i64 in_features = ms[0], out_features = ms[1];
  // torch.export's linear, addmm(bias, x, weight^T), is one fully connected
  // operator with the weights packed once; anything else the general form.
  auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  const Value& bias = cx.graph().value(*self);
  const bool is_bias = bias.is_constant() && bias.data.dtype() == DType::kFloat32 && bias.data.numel() == out_features &&
                       (bias.data.dim() == 1 || (bias.data.dim() == 2 && bias.data.shape()[0] == 1));
  if (alpha != 1 || beta != 1 || !weights || !is_bias) return addmm_general(cx, n, st, x, m, alpha, beta);
  const Tensor& b = bias.data;
  const Fused fused = cx.fused_of(n);
  const int out = cx.new_tensor(Shape{xs[0], out_features}, false);
  gemm_step(cx, n, st, 0, x, out, xs[0], in_features, out_features, [&](i64 first, i64 count, xnn_operator_t* op) {
    // A block: mat2's columns [first, first + count) as a [K, count] matrix of their own.
    std::vector<float> block;
    if (count < out_features) {
      block.resize(static_cast<std::size_t>(in_features * count));
      for (i64 r = 0; r < in_features; ++r)
        std::copy_n(weights + r * out_features + first, count, block.begin() + r * count);
    }
    cx.check(xnn_create_fully_connected_nc_f32(static_cast<std::size_t>(in_features), static_cast<std::size_t>(count),
                                            static_cast<std::size_t>(in_features), static_cast<std::size_t>(out_features),
                                            block.empty() ? weights : block.data(),
                                            b.data_as<float>() + first, fused.min, fused.max, XNN_FLAG_TRANSPOSE_WEIGHTS, nullptr, nullptr, op),
          n, "creating a fully connected op");
  });
  post_activation(cx, n, st, 1, fused, out);
  cx.define(n.outputs[0], out);
}

void lower_matmul(Context& cx, const Node& n, NodeState& st) {
  const std::string base = base_op(n.op);
  const int a = cx.tensor_arg(n, "self", 0);
  const int b = cx.tensor_arg(n, base == "matmul" ? "other" : "mat2", 1);
  if (cx.slot(a).complex || cx.slot(b).complex) {  // as the einsum it is (core ATen's einsum of complex operands)
    const Shape la = logical(cx.slot(a)), lb = logical(cx.slot(b));
    const std::size_t ra = la.size(), rb = lb.size();
    std::string eq = ra == 1 && rb == 1 ? "j,j->" : ra == 1 ? "j,...jk->...k" : rb == 1 ? "...ij,j->...i" : "...ij,...jk->...ik";
    if (ra >= 2 && ra == rb && ra <= 10 && std::equal(la.begin(), la.end() - 2, lb.begin())) {  // the same batch: letters, not an ellipsis
      const std::string batch = std::string("abcdefgh").substr(0, ra - 2);
      eq = batch + "ij," + batch + "jk->" + batch + "ik";
    }
    const auto self = input_for_arg(n, "self", 0), other = input_for_arg(n, base == "matmul" ? "other" : "mat2", 1);
    return einsum_complex(cx, n, st, eq, {*self, *other});
  }
  Shape as = cx.slot(a).shape, bs = cx.slot(b).shape;
  const std::size_t want_rank = base == "mm" ? 2 : 3;
  if (base != "matmul" && (as.size() != want_rank || bs.size() != want_rank))
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + base + " takes two " + std::to_string(want_rank) + "-D tensors, given " + shape_str(as) + " and " + shape_str(bs));
  if (as.empty() || bs.empty()) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": matmul of a 0-d tensor");
  const bool a_vector = as.size() == 1, b_vector = bs.size() == 1;
  if (a_vector) as.insert(as.begin(), 1);
  if (b_vector) bs.push_back(1);
  const i64 m = as[as.size() - 2], k = as.back(), nn = bs.back();
  if (bs[bs.size() - 2] != k) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + shape_str(as) + " @ " + shape_str(bs));
  Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const std::size_t batch_rank = std::max(a_batch.size(), b_batch.size());
  a_batch.insert(a_batch.begin(), batch_rank - a_batch.size(), 1);
  b_batch.insert(b_batch.begin(), batch_rank - b_batch.size(), 1);
  const Shape c_batch = broadcast_shape(cx, n, a_batch, b_batch);
  Shape out_shape = c_batch;
  if (!a_vector) out_shape.push_back(m);
  if (!b_vector) out_shape.push_back(nn);
  cx.define(n.outputs[0], batch_matmul(cx, n, st, a, b, a_batch, b_batch, m, k, nn, out_shape));
}

int batch_matmul(Context& cx, const Node& n, NodeState& st, int a, int b, const Shape& a_batch, const Shape& b_batch, i64 m, i64 k, i64 nn,
                 const Shape& out_shape) {
  const std::size_t batch_rank = a_batch.size();
  cx.within_budget(out_shape);
  const int out = cx.new_tensor(out_shape, false);
  const i64 count = numel(out_shape);
  if (count == 0) return out;
  if (k == 0) {  // a sum over nothing
    Step& step = cx.add_step({}, {out});
    step.run = [&cx, out, count] { portable::fill(cx.ptr(out), 0.0f, count); };
    return out;
  }
  if (st.ops.empty()) {
    st.ops.emplace_back();
    cx.check(xnn_create_batch_matrix_multiply_nc_f32(0, &st.ops.back().op), n, "creating a batch matrix multiply");
  }
  xnn_operator_t op = st.ops.front().op;
  std::vector<std::size_t> da(a_batch.begin(), a_batch.end()), db(b_batch.begin(), b_batch.end());
  std::size_t ws_size = 0, ws_align = 0;
  cx.check(xnn_reshape_batch_matrix_multiply_nc_f32(op, batch_rank, da.data(), db.data(), static_cast<std::size_t>(m),
                                                 static_cast<std::size_t>(k), static_cast<std::size_t>(nn), &ws_size, &ws_align, cx.pool()),
        n, "reshaping a batch matrix multiply");
  cx.reserve_workspace(ws_size);
  const int ai = cx.as_layout(a, false), bi = cx.as_layout(b, false);
  Step& step = cx.add_step({ai, bi}, {out});
  step.setup = [&cx, op, ai, bi, out, &n] {
    cx.check(xnn_setup_batch_matrix_multiply_nc_f32(op, cx.workspace(), cx.ptr(ai), cx.ptr(bi), cx.ptr(out)), n, "setting up a batch matrix multiply");
  };
  step.xnnpack = true;
  step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running a batch matrix multiply"); };
  return out;
}

void lower_outer(Context& cx, const Node& n, NodeState&) {
  const int a = cx.as_layout(cx.tensor_arg(n, "self", 0), false), b = cx.as_layout(cx.tensor_arg(n, "vec2", 1), false);
  const Shape as = cx.slot(a).shape, bs = cx.slot(b).shape;
  if (as.size() != 1 || bs.size() != 1) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + shape_str(as) + " and " + shape_str(bs) + " (vectors)");
  const i64 rows = as[0], cols = bs[0];
  const int out = cx.new_tensor({rows, cols}, false);
  Step& step = cx.add_step({a, b}, {out});
  step.run = [&cx, a, b, out, rows, cols] {
    const float* x = cx.ptr(a);
    const float* y = cx.ptr(b);
    float* o = cx.ptr(out);
    for (i64 i = 0; i < rows; ++i)
      for (i64 j = 0; j < cols; ++j) o[i * cols + j] = x[i] * y[j];
  };
  cx.define(n.outputs[0], out);
}

void lower_baddbmm(Context& cx, const Node& n, NodeState&) {
  // beta * self + alpha * (batch1 @ batch2), self broadcast to [B, N, P]; beta 0 ignores self (NaN too), as torch.
  int self = cx.held_tensor_slot(n, *input_for_arg(n, "self", 0));
  const int b1 = cx.as_layout(cx.tensor_arg(n, "batch1", 1), false), b2 = cx.as_layout(cx.tensor_arg(n, "batch2", 2), false);
  const Shape s1 = cx.slot(b1).shape, s2 = cx.slot(b2).shape;
  if (s1.size() != 3 || s2.size() != 3 || s1[0] != s2[0] || s1[2] != s2[1])
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": batch1 " + shape_str(s1) + " and batch2 " + shape_str(s2));
  const i64 batch = s1[0], rows = s1[1], inner = s1[2], cols = s2[2];
  const Shape shape{batch, rows, cols};
  const auto fits = shape_rules::broadcast(cx.slot(self).shape, shape);
  if (!fits || *fits != shape) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": self " + shape_str(cx.slot(self).shape) + " for " + shape_str(shape));
  self = cx.as_layout(broadcast_to(cx, self, shape), false);
  const auto beta = static_cast<float>(cx.float_arg(n, "beta").value_or(1.0)), alpha = static_cast<float>(cx.float_arg(n, "alpha").value_or(1.0));
  const int out = cx.new_tensor(shape, false);
  Step& step = cx.add_step({self, b1, b2}, {out});
  step.run = [&cx, self, b1, b2, out, batch, rows, inner, cols, beta, alpha] {
    const float* c = cx.ptr(self);
    const float* x = cx.ptr(b1);
    const float* y = cx.ptr(b2);
    float* o = cx.ptr(out);
    for (i64 b = 0; b < batch; ++b)
      for (i64 i = 0; i < rows; ++i)
        for (i64 j = 0; j < cols; ++j) {
          double acc = 0;
          for (i64 k = 0; k < inner; ++k) acc += static_cast<double>(x[(b * rows + i) * inner + k]) * y[(b * inner + k) * cols + j];
          const i64 at = (b * rows + i) * cols + j;
          o[at] = alpha * static_cast<float>(acc) + (beta == 0 ? 0.0f : beta * c[at]);
        }
  };
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
