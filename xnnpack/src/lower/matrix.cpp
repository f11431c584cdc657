// Matrix products: linear and addmm (XNNPACK fully connected), matmul/mm/bmm and einsum (batch matrix multiply), multi-head attention.
#include "lower/lowerings.h"

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

namespace {
void einsum_complex(Context& cx, const Node& n, NodeState& st, std::string eq, const std::vector<ValueId>& operands);
std::optional<int> einsum_matmul(Context& cx, const Node& n, NodeState& st, const std::string& eq, int a, int b);
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

int permuted(Context& cx, int x, const std::vector<std::size_t>& perm) {
  x = cx.as_layout(x, false);
  const Shape xs = cx.slot(x).shape;
  bool in_order = true;
  for (std::size_t i = 0; i < perm.size(); ++i) in_order = in_order && perm[i] == i;
  if (in_order || xs.size() < 2) return x;
  std::vector<std::size_t> in_shape(xs.begin(), xs.end());
  Shape out_shape;
  for (std::size_t p : perm) out_shape.push_back(xs[p]);
  return cx.transposed(x, in_shape, perm, out_shape, false);
}

namespace {

// einsum in any form torch takes (any number of operands, an ellipsis
// broadcast, a letter repeated in one operand for a diagonal, sums over one
// operand) on the portable kernel: a plain loop over every letter.
// The letters of each of the `count` operands an einsum equation names.
std::vector<std::string> einsum_operands(const Context& cx, const Node& n, const std::string& eq, std::size_t count) {
  std::vector<std::string> subs;
  const std::string lhs = eq.substr(0, eq.find("->"));
  for (std::size_t at = 0;;) {
    const std::size_t comma = lhs.find(',', at);
    subs.push_back(lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (subs.size() != count)
    fail(ErrorCode::kSchema, cx.where(n) + ": einsum '" + eq + "' names " + std::to_string(subs.size()) + " operands for " + std::to_string(count));
  return subs;
}

// The output slot, of operand slots `slots`.
int einsum_slots(Context& cx, const Node& n, const std::string& eq, std::vector<int> slots) {
  const std::size_t arrow = eq.find("->");
  const std::vector<std::string> subs = einsum_operands(cx, n, eq, slots.size());
  for (int& s : slots) s = cx.as_layout(s, false);
  // The ellipsis as letters of its own ('0' onwards, right-aligned across operands).
  std::size_t ellipsis = 0;
  auto letters_of = [&](const std::string& sub, std::size_t dots) {
    const std::size_t at = sub.find("...");
    if (at == std::string::npos) return sub;
    std::string filler;
    for (std::size_t i = 0; i < dots; ++i) filler += static_cast<char>('0' + (ellipsis - dots + i));
    return sub.substr(0, at) + filler + sub.substr(at + 3);
  };
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const std::size_t at = subs[i].find("...");
    if (at == std::string::npos) continue;
    const std::size_t named = subs[i].size() - 3, rank = cx.slot(slots[i]).shape.size();
    if (rank < named) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + subs[i] + "' for an operand of rank " + std::to_string(rank));
    ellipsis = std::max(ellipsis, rank - named);
  }
  if (ellipsis > 10) fail(ErrorCode::kLimitExceeded, cx.where(n) + ": an ellipsis over " + std::to_string(ellipsis) + " dims");
  std::map<char, i64> size;
  std::vector<std::string> expanded;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const Shape& shape = cx.slot(slots[i]).shape;
    const std::size_t dots = subs[i].find("...") == std::string::npos ? 0 : shape.size() - (subs[i].size() - 3);
    const std::string letters = letters_of(subs[i], dots);
    if (letters.size() != shape.size())
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + subs[i] + "' for an operand of shape " + shape_str(shape));
    for (std::size_t d = 0; d < letters.size(); ++d) {
      const char c = letters[d];
      if (!std::isalnum(static_cast<unsigned char>(c))) fail(ErrorCode::kSchema, cx.where(n) + ": '" + eq + "' has '" + std::string(1, c) + "'");
      auto [it, fresh] = size.emplace(c, shape[d]);
      if (fresh || it->second == shape[d]) continue;
      // A size 1 broadcasts under an ellipsis; otherwise the sizes must agree.
      if (std::isdigit(static_cast<unsigned char>(c)) && (it->second == 1 || shape[d] == 1)) it->second = std::max(it->second, shape[d]);
      else fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + std::string(1, c) + "' is " + std::to_string(it->second) + " and " + std::to_string(shape[d]) + " in '" + eq + "'");
    }
    expanded.push_back(letters);
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = letters_of(eq.substr(arrow + 2), eq.find("...", arrow) == std::string::npos ? 0 : ellipsis);
  } else {  // implicit: the ellipsis, then the letters used once, in alphabetical order
    std::string all;
    for (const std::string& e : expanded) all += e;
    for (std::size_t i = 0; i < ellipsis; ++i) out += static_cast<char>('0' + i);
    std::string once;
    for (char c : all)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(all.begin(), all.end(), c) == 1) once += c;
    std::sort(once.begin(), once.end());
    out += once;
  }
  portable::Einsum e;
  std::string order;  // the output's letters, then the summed ones
  for (char c : out) {
    if (!size.count(c)) fail(ErrorCode::kSchema, cx.where(n) + ": output letter '" + std::string(1, c) + "' is in no operand");
    if (std::count(out.begin(), out.end(), c) > 1) fail(ErrorCode::kSchema, cx.where(n) + ": output letter '" + std::string(1, c) + "' twice");
    order += c;
  }
  e.out_letters = order.size();
  for (const auto& [c, s] : size)
    if (order.find(c) == std::string::npos) order += c;
  Shape out_shape;
  for (char c : order) e.sizes.push_back(size[c]);
  out_shape.assign(e.sizes.begin(), e.sizes.begin() + static_cast<std::ptrdiff_t>(e.out_letters));
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    const Shape& shape = cx.slot(slots[i]).shape;
    std::vector<i64> stride(order.size(), 0);
    i64 step = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (shape[d] != 1) stride[order.find(expanded[i][d])] += step;  // a broadcast 1 stays 0; a repeat adds up: the diagonal
      step *= shape[d];
    }
    e.strides.push_back(std::move(stride));
  }
  cx.within_budget(out_shape);
  const int y = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step(slots, {y});
  step.run = [&cx, e, slots, y] {
    std::vector<const float*> x;
    for (int s : slots) x.push_back(cx.ptr(s));
    portable::einsum(e, x, cx.ptr(y));
  };
  return y;
}

void einsum_portable(Context& cx, const Node& n, const std::string& eq, const std::vector<ValueId>& operands) {
  std::vector<int> slots;
  for (ValueId v : operands) slots.push_back(cx.held_tensor_slot(n, v));
  cx.define(n.outputs[0], einsum_slots(cx, n, eq, slots));
}

// Complex slot `b` (pairs) as real [..., 2, 2] blocks [[re, im], [-im, re]]:
// a complex (x + yi) times it is the real row (x, y) times the block. Made
// once for a constant (spectral weights), else a step.
int complex_real_form(Context& cx, int b) {
  b = cx.as_layout(b, false);
  Shape shape = cx.slot(b).shape;
  shape.push_back(2);  // [..., 2 (p), 2 (r)]
  const i64 count = numel(shape) / 4;
  const auto fill = [count](const float* z, float* y) {
    for (i64 e = 0; e < count; ++e) {
      const float re = z[2 * e], im = z[2 * e + 1];
      y[4 * e] = re, y[4 * e + 1] = im, y[4 * e + 2] = -im, y[4 * e + 3] = re;
    }
  };
  if (const float* c = cx.slot(b).constant) {
    std::vector<float> values(static_cast<std::size_t>(4 * count));
    fill(c, values.data());
    return cx.planned_constant(shape, std::move(values));
  }
  const int out = cx.new_tensor(shape, false);
  cx.portable_map(b, out, fill);
  return out;
}

// einsum of complex operands (neuraloperator's spectral convolutions), as a
// real einsum over their (real, imaginary) pairs, each operand's pair dim a
// letter of its own. One operand (a transpose, a diagonal): its pair letter
// goes to the output. Two: the second as its real 2 x 2 blocks
// (complex_real_form), the first's pair letter summed with the others, so
// that the form goes to a batch matrix multiply like a real einsum's.
void einsum_complex(Context& cx, const Node& n, NodeState& st, std::string eq, const std::vector<ValueId>& operands) {
  std::vector<int> slots;
  for (ValueId v : operands) {
    slots.push_back(cx.held_tensor_slot(n, v));
    if (!cx.slot(slots.back()).complex)
      fail(ErrorCode::kUnsupported, cx.where(n) + ": einsum of complex and real operands (torch refuses it too)");
  }
  if (slots.size() > 2) fail(ErrorCode::kUnsupported, cx.where(n) + ": einsum of " + std::to_string(slots.size()) + " complex operands (two at most here)");
  // Letters the equation does not use, for the pair dims.
  std::string free;
  for (char c : std::string("zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"))
    if (eq.find(c) == std::string::npos && free.size() < 2) free += c;
  if (free.size() < 2) fail(ErrorCode::kUnsupported, cx.where(n) + ": einsum '" + eq + "' leaves no letter for the complex pairs");
  const std::size_t arrow = eq.find("->");
  const std::vector<std::string> subs = einsum_operands(cx, n, eq, slots.size());
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {  // implicit: the ellipsis, then the letters used once, in alphabetical order
    std::string all;
    for (const std::string& sub : subs) all += sub;
    if (all.find("...") != std::string::npos) out = "...";
    std::string once;
    for (char c : all)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(all.begin(), all.end(), c) == 1) once += c;
    std::sort(once.begin(), once.end());
    out += once;
  }
  const char pair = free[0], result = free[1];
  int y = -1;
  if (slots.size() == 1) {
    y = einsum_slots(cx, n, subs[0] + result + "->" + out + result, slots);
  } else {
    const int real_form = complex_real_form(cx, slots[1]);
    const std::string real_eq = subs[0] + pair + "," + subs[1] + pair + result + "->" + out + result;
    if (auto product = einsum_matmul(cx, n, st, real_eq, slots[0], real_form)) y = *product;
    else y = einsum_slots(cx, n, real_eq, {slots[0], real_form});
  }
  cx.slot(y).complex = true;
  cx.define(n.outputs[0], y);
}

// einsum of two operands `a` and `b` without an ellipsis or a diagonal, where
// every letter summed is in both: one batch matrix multiply (its output
// slot); nullopt for any other form (the portable kernel's).
std::optional<int> einsum_matmul(Context& cx, const Node& n, NodeState& st, const std::string& eq, int a, int b) {
  const std::size_t arrow = eq.find("->");
  const std::size_t comma = eq.find(',');
  if (comma == std::string::npos || eq.find(',', comma + 1) != std::string::npos || eq.find('.') != std::string::npos) return std::nullopt;
  const std::string sa = eq.substr(0, comma), sb = eq.substr(comma + 1, arrow == std::string::npos ? std::string::npos : arrow - comma - 1);
  for (const std::string* letters : {&sa, &sb})
    for (char c : *letters)
      if (std::count(letters->begin(), letters->end(), c) > 1) return std::nullopt;
  std::string so;
  if (arrow != std::string::npos) {
    so = eq.substr(arrow + 2);
  } else {  // implicit output: the letters used once, in alphabetical order
    for (char c : sa + sb)
      if (std::count(sa.begin(), sa.end(), c) + std::count(sb.begin(), sb.end(), c) == 1) so += c;
    std::sort(so.begin(), so.end());
  }
  const Shape as = cx.slot(a).shape, bs = cx.slot(b).shape;
  if (sa.size() != as.size() || sb.size() != bs.size())
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + eq + "' for operands " + shape_str(as) + " and " + shape_str(bs));
  std::map<char, i64> size;
  auto take = [&](const std::string& letters, const Shape& shape) {
    for (std::size_t i = 0; i < letters.size(); ++i) {
      const char c = letters[i];
      if (!std::isalpha(static_cast<unsigned char>(c))) fail(ErrorCode::kSchema, cx.where(n) + ": '" + eq + "' has '" + std::string(1, c) + "'");
      auto [it, fresh] = size.emplace(c, shape[i]);
      if (!fresh && it->second != shape[i])
        fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + std::string(1, c) + "' is " + std::to_string(it->second) + " and " + std::to_string(shape[i]) + " in '" + eq + "'");
    }
  };
  take(sa, as);
  take(sb, bs);
  std::string batch, rows, cols, summed;
  auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  for (char c : so) {
    if (!in(sa, c) && !in(sb, c)) fail(ErrorCode::kSchema, cx.where(n) + ": output letter '" + std::string(1, c) + "' is in no operand");
    if (std::count(so.begin(), so.end(), c) > 1) fail(ErrorCode::kSchema, cx.where(n) + ": output letter '" + std::string(1, c) + "' twice");
    (in(sa, c) && in(sb, c) ? batch : in(sa, c) ? rows : cols) += c;
  }
  for (char c : sa) {
    if (in(so, c)) continue;
    if (!in(sb, c)) return std::nullopt;  // summed over one operand only
    summed += c;
  }
  for (char c : sb)
    if (!in(so, c) && !in(sa, c)) return std::nullopt;
  auto order = [](const std::string& letters, const std::string& want) {
    std::vector<std::size_t> perm;
    for (char c : want) perm.push_back(letters.find(c));
    return perm;
  };
  auto product_of = [&](const std::string& letters) {
    i64 p = 1;
    for (char c : letters) p *= size[c];
    return p;
  };
  const i64 m = product_of(rows), k = product_of(summed), nn = product_of(cols);
  const int pa = permuted(cx, a, order(sa, batch + rows + summed));
  const int pb = permuted(cx, b, order(sb, batch + summed + cols));
  Shape batch_shape;
  for (char c : batch) batch_shape.push_back(size[c]);
  Shape mid = batch_shape;  // the product's own order: batch, rows, columns
  for (char c : rows + cols) mid.push_back(size[c]);
  const int product = batch_matmul(cx, n, st, pa, pb, batch_shape, batch_shape, m, k, nn, mid);
  return permuted(cx, product, order(batch + rows + cols, so));
}

}  // namespace

void lower_einsum(Context& cx, const Node& n, NodeState& st) {
  std::string eq;
  for (char c : n.attributes.get_string("equation").value_or("")) {
    if (c != ' ') eq += c;
  }
  std::vector<ValueId> operands = n.attributes.contains(kArgNamesAttribute) ? inputs_for_arg(n, "tensors") : n.inputs;
  if (std::any_of(operands.begin(), operands.end(), [&](ValueId v) { return cx.slot_of(v).complex; })) return einsum_complex(cx, n, st, eq, operands);
  // Two operands: one batch matrix multiply where the form allows; any other on the portable kernel.
  if (operands.size() == 2) {
    if (auto y = einsum_matmul(cx, n, st, eq, cx.tensor_slot(n, operands[0]), cx.tensor_slot(n, operands[1]))) return cx.define(n.outputs[0], *y);
  }
  einsum_portable(cx, n, eq, operands);
}

namespace {

// XNNPACK's fused attention (scaled-dot-product-attention-nhtc): per tile of
// query rows, the scores against every key, the softmax and the weighted sum
// of values, with the scores in a buffer of a few rows per thread. It adds one
// [L, S] mask to every batch's scores, so the batch dims split in two: those
// the mask varies over (one run each, `outer`) and those it is broadcast over
// (one run's batch, `inner`). A mask given that broadcasts to more than this
// many floats [outer, L, S] runs on the portable kernel.
constexpr i64 kMaskFloatsForXnnpack = i64{1} << 24;

// XNNPACK's attention operator number `index` of the node, reshaped for
// `batch` attentions of L queries against S keys.
xnn_operator_t attention_op(Context& cx, const Node& n, NodeState& st, std::size_t index, i64 batch, i64 L, i64 S, i64 E, i64 Ev) {
  while (st.ops.size() <= index) {
    st.ops.emplace_back();
    cx.check(xnn_create_scaled_dot_product_attention_nhtc_f32(xnn_attention_logits_cap_type_none, nullptr, 0, &st.ops.back().op), n,
             "creating a scaled dot product attention");
  }
  xnn_operator_t op = st.ops[index].op;
  std::size_t ws_size = 0, ws_align = 0;
  cx.check(xnn_reshape_scaled_dot_product_attention_nhtc_f32(op, static_cast<std::size_t>(batch), 1, static_cast<std::size_t>(L), 1,
                                                           static_cast<std::size_t>(S), static_cast<std::size_t>(E), static_cast<std::size_t>(Ev),
                                                           &ws_size, &ws_align, cx.pool()),
           n, "reshaping a scaled dot product attention");
  cx.reserve_workspace(ws_size);
  return op;
}

// Past this many mask floats ([L, S]), attention without a mask or causal runs
// in chunks of query rows, each with a mask of its own rows: a model's long
// sequences (4096 tokens and more) need no mask of L * S floats.
constexpr i64 kMaskChunkFloats = i64{1} << 20;

// Attention without a mask, or causal, in chunks of `rows` query rows per
// batch item (the last chunk shorter): q [batch, L, E], k [batch, S, E],
// v [batch, S, Ev] into out [batch, L, Ev]. The causal mask of a chunk is
// written before its run.
void fused_attention_in_chunks(Context& cx, const Node& n, NodeState& st, int q, int k, int v, int out, i64 batch, i64 L, i64 S, i64 E, i64 Ev,
                               double scale_value, bool causal) {
  const i64 rows = std::max<i64>(1, std::min(L, kMaskChunkFloats / S)), tail = L % rows;
  const int scale = cx.planned_constant({E}, std::vector<float>(static_cast<std::size_t>(E), static_cast<float>(scale_value)));
  const int mask = causal ? cx.new_tensor({rows, S}, false) : cx.planned_constant({rows, S}, std::vector<float>(static_cast<std::size_t>(rows * S), 0.0f));
  xnn_operator_t full = attention_op(cx, n, st, 0, 1, rows, S, E, Ev);
  xnn_operator_t last = tail ? attention_op(cx, n, st, 1, 1, tail, S, E, Ev) : nullptr;
  Step& step = cx.add_step({q, k, v, scale}, causal ? std::vector<int>{out, mask} : std::vector<int>{out});
  if (!causal) step.reads.push_back(mask);
  step.xnnpack = true;
  step.run = [&cx, &n, full, last, q, k, v, scale, mask, out, batch, L, S, E, Ev, rows, causal] {
    float* m = cx.ptr(mask);
    for (i64 b = 0; b < batch; ++b)
      for (i64 r0 = 0; r0 < L; r0 += rows) {
        const i64 count = std::min(rows, L - r0);
        if (causal)  // torch's tril(ones(L, S)): row i keeps keys 0..i
          for (i64 i = 0; i < count; ++i)
            for (i64 j = 0; j < S; ++j) m[i * S + j] = j <= r0 + i ? 0.0f : -kInf;
        xnn_operator_t op = count == rows ? full : last;
        cx.check(xnn_setup_scaled_dot_product_attention_nhtc_f32(op, cx.workspace(), cx.ptr(q) + (b * L + r0) * E, cx.ptr(k) + b * S * E,
                                                               cx.ptr(v) + b * S * Ev, cx.ptr(scale), m, cx.ptr(out) + (b * L + r0) * Ev),
                 n, "setting up a scaled dot product attention");
        cx.check(xnn_run_operator(op, cx.pool()), n, "running a scaled dot product attention");
      }
  };
}

// XNNPACK's fused attention on q [outer * inner, L, E], k [.., S, E] and
// v [.., S, Ev] in torch's order into `out` [.., L, Ev], with an additive
// mask [outer, L, S]: one run per outer slice. `no_key`: the value rows whose
// mask leaves no key (all -inf) get after the run (torch's SDPA: zeros),
// where XNNPACK's softmax gives what it gives.
struct AttentionSlots {
  int q, k, v, mask, out;
};
void fused_attention(Context& cx, const Node& n, NodeState& st, AttentionSlots s, i64 outer, i64 inner, i64 L, i64 S, i64 E, i64 Ev, double scale_value,
                     std::optional<float> no_key) {
  const int scale = cx.planned_constant({E}, std::vector<float>(static_cast<std::size_t>(E), static_cast<float>(scale_value)));
  xnn_operator_t op = attention_op(cx, n, st, 0, inner, L, S, E, Ev);
  Step& step = cx.add_step({s.q, s.k, s.v, s.mask, scale}, {s.out});
  step.xnnpack = true;
  step.run = [&cx, &n, op, s, scale, outer, inner, L, S, E, Ev, no_key] {
    for (i64 o = 0; o < outer; ++o) {
      const float* mo = cx.ptr(s.mask) + o * L * S;
      float* oo = cx.ptr(s.out) + o * inner * L * Ev;
      cx.check(xnn_setup_scaled_dot_product_attention_nhtc_f32(op, cx.workspace(), cx.ptr(s.q) + o * inner * L * E, cx.ptr(s.k) + o * inner * S * E,
                                                             cx.ptr(s.v) + o * inner * S * Ev, cx.ptr(scale), mo, oo),
               n, "setting up a scaled dot product attention");
      cx.check(xnn_run_operator(op, cx.pool()), n, "running a scaled dot product attention");
      if (!no_key) continue;
      for (i64 i = 0; i < L; ++i) {
        const float* row = mo + i * S;
        if (!std::all_of(row, row + S, [](float x) { return x == -kInf; })) continue;
        for (i64 b = 0; b < inner; ++b) std::fill_n(oo + (b * L + i) * Ev, Ev, *no_key);
      }
    }
  };
}

// How many of the `batch_dims` leading dims of `full` (batch..., L, S) a mask
// of shape `mask` (broadcast to it) varies over, up to the last one it does.
std::size_t varying_dims(const Shape& mask, const Shape& full, std::size_t batch_dims) {
  std::size_t varying = 0;
  for (std::size_t d = 0; d < batch_dims; ++d) {
    const std::size_t from_end = full.size() - d;
    if (from_end <= mask.size() && mask[mask.size() - from_end] > 1) varying = d + 1;
  }
  return varying;
}

// The additive [outer..., L, S] mask XNNPACK takes: none (zeros), causal, or
// slot `m` (a bool mask made 0 / -inf by a step: 0 where it is set when
// a.mask_keeps, as SDPA's; -inf where it is set when `drops`, as
// _native_multi_head_attention's).
int additive_mask(Context& cx, const portable::Sdpa& a, std::optional<int> m, const Shape& batch, std::size_t varying, bool drops = false) {
  const i64 L = a.query_length, S = a.key_length;
  if (!m) {
    std::vector<float> values(static_cast<std::size_t>(L * S), 0.0f);
    if (a.causal)  // torch's tril(ones(L, S)): row i keeps keys 0..i
      for (i64 i = 0; i < L; ++i)
        for (i64 j = i + 1; j < S; ++j) values[static_cast<std::size_t>(i * S + j)] = -kInf;
    return cx.planned_constant({L, S}, std::move(values));
  }
  const int ms = cx.as_layout(*m, false);
  Shape padded = cx.slot(ms).shape;
  padded.insert(padded.begin(), batch.size() + 2 - padded.size(), 1);
  // The dims after the varying ones are 1 in the mask: the same storage without them.
  Shape kept(padded.begin(), padded.begin() + static_cast<std::ptrdiff_t>(varying));
  kept.insert(kept.end(), padded.end() - 2, padded.end());
  Shape target(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(varying));
  target.push_back(L);
  target.push_back(S);
  const int full = broadcast_to(cx, cx.alias(ms, kept, false), target);
  if (!a.mask_keeps && !drops) return full;
  const int out = cx.new_tensor(target, false);
  const i64 count = numel(target);
  const float set = drops ? -kInf : 0.0f, unset = drops ? 0.0f : -kInf;
  Step& step = cx.add_step({full}, {out});
  step.run = [&cx, full, out, count, set, unset] {
    const float* mask = cx.ptr(full);
    float* o = cx.ptr(out);
    for (i64 i = 0; i < count; ++i) o[i] = mask[i] != 0 ? set : unset;
  };
  return out;
}

}  // namespace

void lower_sdpa(Context& cx, const Node& n, NodeState& st) {
  const int q = cx.as_layout(cx.tensor_arg(n, "query", 0), false);
  const int k = cx.as_layout(cx.tensor_arg(n, "key", 1), false);
  const int v = cx.as_layout(cx.tensor_arg(n, "value", 2), false);
  const Shape qs = cx.slot(q).shape, ks = cx.slot(k).shape, vs = cx.slot(v).shape;
  const std::size_t rank = qs.size();
  if (rank < 2 || ks.size() != rank || vs.size() != rank)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": query " + shape_str(qs) + ", key " + shape_str(ks) + " and value " + shape_str(vs) +
                                        " need one rank of 2 or more");
  const Shape batch(qs.begin(), qs.end() - 2);
  if (Shape(ks.begin(), ks.end() - 2) != batch || Shape(vs.begin(), vs.end() - 2) != batch)
    fail(ErrorCode::kUnsupported, cx.where(n) + ": query " + shape_str(qs) + ", key " + shape_str(ks) + " and value " + shape_str(vs) +
                                      " with batch dims that differ (broadcast, or grouped query attention)");
  portable::Sdpa a;
  a.batch = prod(batch, 0, batch.size());
  a.query_length = qs[rank - 2];
  a.embed = qs[rank - 1];
  a.key_length = ks[rank - 2];
  a.value_embed = vs[rank - 1];
  if (ks[rank - 1] != a.embed || vs[rank - 2] != a.key_length)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": query " + shape_str(qs) + ", key " + shape_str(ks) + " and value " + shape_str(vs) + " do not fit");
  if (const double p = cx.float_arg(n, "dropout_p").value_or(0); p != 0)
    fail(ErrorCode::kUnsupported, cx.where(n) + ": dropout_p " + std::to_string(p) + " (torch drops at random even in eval; inference passes 0)");
  a.causal = cx.int_arg(n, "is_causal").value_or(0) != 0;
  a.scale = cx.float_arg(n, "scale").value_or(1.0 / std::sqrt(static_cast<double>(a.embed)));
  const i64 L = a.query_length, S = a.key_length, E = a.embed, Ev = a.value_embed;
  Shape full = batch;
  full.push_back(L);
  full.push_back(S);
  std::optional<ValueId> m = input_for_arg(n, "attn_mask", 3);
  if (m && cx.slot_of(*m).kind != Kind::kTensor) m.reset();
  std::size_t varying = 0;  // the batch dims up to the last one the mask varies over
  if (m) {
    if (a.causal) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": is_causal with an attn_mask (torch refuses both)");
    const Shape ms = cx.slot_of(*m).shape;
    const auto fits = shape_rules::broadcast(ms, full);
    if (!fits || *fits != full) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": attn_mask " + shape_str(ms) + " does not broadcast to " + shape_str(full));
    a.mask_keeps = is_mask(cx.graph(), *m);
    varying = varying_dims(ms, full, batch.size());
  }
  Shape out_shape = qs;
  out_shape.back() = Ev;
  const int out = cx.new_tensor(out_shape, false);
  const i64 outer = prod(batch, 0, varying), inner = prod(batch, varying, batch.size());
  if (numel(out_shape) > 0 && S > 0 && E > 0 && !m && L * S > kMaskChunkFloats) {
    fused_attention_in_chunks(cx, n, st, q, k, v, out, a.batch, L, S, E, Ev, a.scale, a.causal);
    cx.define(n.outputs[0], out);
    return;
  }
  if (numel(out_shape) > 0 && S > 0 && E > 0 && outer * L * S <= kMaskFloatsForXnnpack) {
    const int mask = additive_mask(cx, a, m ? std::optional<int>(cx.tensor_slot(n, *m)) : std::nullopt, batch, varying);
    // torch gives zeros for a query row whose mask leaves no key (its
    // _safe_softmax); None and causal masks leave a key in every row.
    fused_attention(cx, n, st, {q, k, v, mask, out}, outer, inner, L, S, E, Ev, a.scale, m ? std::optional<float>(0.0f) : std::nullopt);
    cx.define(n.outputs[0], out);
    return;
  }
  std::vector<int> reads{q, k, v};
  int mask = -1;
  if (m) {
    mask = broadcast_to(cx, cx.tensor_slot(n, *m), full);
    reads.push_back(mask);
  }
  Step& step = cx.add_step(reads, {out});
  const i64 rows = a.batch * L;
  // A row costs S * (E + Ev) multiply-adds: threads take a few thousand floats' worth.
  const i64 tile = std::max<i64>(1, kSliceFloats / std::max<i64>(S * (E + Ev), 1));
  step.run = [&cx, a, q, k, v, mask, out, rows, tile] {
    const float* mp = mask >= 0 ? cx.ptr(mask) : nullptr;
    cx.parallel_slices(rows, [&](i64 first, i64 count) { portable::sdpa(a, cx.ptr(q), cx.ptr(k), cx.ptr(v), mp, cx.ptr(out), first, count); }, tile);
  };
  cx.define(n.outputs[0], out);
}

void lower_attention(Context& cx, const Node& n, NodeState& st) {
  const int q = cx.tensor_arg(n, "query", 0), k = cx.tensor_arg(n, "key", 1), v = cx.tensor_arg(n, "value", 2);
  const Shape qs = cx.slot(q).shape, ks = cx.slot(k).shape;
  if (qs.size() != 3 || ks != qs || ks != cx.slot(v).shape)  // as PyTorch's kernel requires
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": query " + shape_str(qs) + ", key " + shape_str(ks) + " (equal batch-first [batch, length, embed] expected)");
  std::optional<ValueId> mask_arg = input_for_arg(n, "mask", 9);
  if (mask_arg && cx.slot_of(*mask_arg).kind != Kind::kTensor) mask_arg.reset();
  portable::Attention a{};
  a.batch = qs[0];
  a.query_length = qs[1];
  a.key_length = ks[1];
  a.embed = cx.int_arg(n, "embed_dim").value_or(qs[2]);
  a.heads = cx.int_arg(n, "num_head").value_or(1);
  a.average = cx.int_arg(n, "average_attn_weights").value_or(1) != 0;
  if (a.embed != qs[2] || a.heads <= 0 || a.embed % a.heads)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": embed_dim " + std::to_string(a.embed) + " in " + std::to_string(a.heads) + " heads for inputs of " + std::to_string(qs[2]));
  const i64 e = a.embed;
  const float* qkv_w = cx.weight_or_null(n, "qkv_weight", 5, 3 * e * e);
  const float* qkv_b = cx.weight_or_null(n, "qkv_bias", 6, 3 * e);
  const float* proj_w = cx.weight_or_null(n, "proj_weight", 7, e * e);
  const float* proj_b = cx.weight_or_null(n, "proj_bias", 8, e);
  if (!qkv_w || !proj_w) fail(ErrorCode::kSchema, cx.where(n) + ": missing qkv_weight or proj_weight");
  const bool need_weights = cx.int_arg(n, "need_weights").value_or(1) != 0;
  if (mask_arg && need_weights) fail(ErrorCode::kUnsupported, cx.where(n) + ": attention with a mask and its weights asked for");
  // The projections on XNNPACK (weights packed once). The attention itself on
  // XNNPACK's fused attention, heads first; where the weights are asked for, a
  // portable kernel (scores, softmax, weighted sum per head) that keeps them.
  const int pq = fully_connected(cx, n, st, 0, q, qkv_w, qkv_b, e, e);
  const int pk = fully_connected(cx, n, st, 1, k, qkv_w + e * e, qkv_b ? qkv_b + e : nullptr, e, e);
  const int pv = fully_connected(cx, n, st, 2, v, qkv_w + 2 * e * e, qkv_b ? qkv_b + 2 * e : nullptr, e, e);
  const i64 d = e / a.heads, L = a.query_length, S = a.key_length;
  if (!need_weights && numel(qs) > 0 && S > 0) {
    auto heads_first = [&](int x, i64 length) { return permuted(cx, cx.alias(x, {a.batch, length, a.heads, d}, false), {0, 2, 1, 3}); };
    const int hq = heads_first(pq, L), hk = heads_first(pk, S), hv = heads_first(pv, S);
    const int by_head = cx.new_tensor({a.batch, a.heads, L, d}, false);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    int additive = -1;
    std::size_t varying = 0;  // the batch dims (B, H) up to the last one the mask varies over
    if (mask_arg) {
      // torch's mask_type: 0 an attention mask [L, S], 1 a key padding mask
      // [B, S], 2 both merged [B, H, L, S]; set means left out (its
      // _masked_softmax), and a row with no key left gives NaN, as this op's
      // own kernel does (nn.MultiheadAttention's other path gives zeros).
      int mask = cx.as_layout(cx.tensor_slot(n, *mask_arg), false);
      Shape ms = cx.slot(mask).shape;
      const std::optional<i64> type = cx.int_arg(n, "mask_type");
      if (ms.size() == 2 && ms == Shape{a.batch, S} && (type ? *type == 1 : ms != Shape{L, S})) ms = {a.batch, 1, 1, S};
      const Shape full{a.batch, a.heads, L, S};
      const auto fits = shape_rules::broadcast(ms, full);
      if (!fits || *fits != full) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": mask " + shape_str(cx.slot(mask).shape) + " for attention of " + shape_str(full));
      if (ms.size() == 4) mask = cx.alias(mask, ms, false);
      varying = varying_dims(ms, full, 2);
      const Shape batch{a.batch, a.heads};
      if (prod(batch, 0, varying) * L * S > kMaskFloatsForXnnpack)
        fail(ErrorCode::kUnsupported, cx.where(n) + ": a mask of " + shape_str(full) + ", past what the fused attention takes");
      portable::Sdpa geometry;
      geometry.query_length = L;
      geometry.key_length = S;
      additive = additive_mask(cx, geometry, mask, batch, varying, is_mask(cx.graph(), *mask_arg));
      fused_attention(cx, n, st, {hq, hk, hv, additive, by_head}, prod(batch, 0, varying), prod(batch, varying, 2), L, S, d, d, scale, std::nullopt);
    } else if (L * S > kMaskChunkFloats) {
      fused_attention_in_chunks(cx, n, st, hq, hk, hv, by_head, a.batch * a.heads, L, S, d, d, scale, false);
    } else {
      const int mask = cx.planned_constant({L, S}, std::vector<float>(static_cast<std::size_t>(L * S), 0.0f));
      fused_attention(cx, n, st, {hq, hk, hv, mask, by_head}, 1, a.batch * a.heads, L, S, d, d, scale, std::nullopt);
    }
    const int context = cx.alias(permuted(cx, by_head, {0, 2, 1, 3}), qs, false);
    const int y = fully_connected(cx, n, st, 3, context, proj_w, proj_b, e, e);
    if (additive >= 0) {
      // A query whose mask leaves one of its heads no key: NaN through the
      // projection in torch, its whole row (XNNPACK's clamps would not keep it).
      Step& nan_rows = cx.add_step({y, additive}, {y});
      nan_rows.run = [&cx, y, additive, varying, B = a.batch, H = a.heads, L, S, e] {
        const float* masks = cx.ptr(additive);
        float* out = cx.ptr(y);
        for (i64 b = 0; b < B; ++b)
          for (i64 h = 0; h < H; ++h) {
            const i64 o = varying == 0 ? 0 : varying == 1 ? b : b * H + h;
            for (i64 i = 0; i < L; ++i) {
              const float* row = masks + (o * L + i) * S;
              if (std::all_of(row, row + S, [](float m) { return m == -kInf; })) std::fill_n(out + (b * L + i) * e, e, std::numeric_limits<float>::quiet_NaN());
            }
          }
      };
    }
    cx.define(n.outputs[0], y);
    if (n.outputs.size() > 1) cx.define(n.outputs[1], cx.new_tensor(Shape{0}, false));
    return;
  }
  const int context = cx.new_tensor(qs, false);
  const int weights = need_weights ? cx.new_tensor(a.average ? Shape{a.batch, a.query_length, a.key_length} : Shape{a.batch, a.heads, a.query_length, a.key_length}, false)
                                   : cx.new_tensor(Shape{0}, false);
  Step& step = cx.add_step({pq, pk, pv}, {context, weights});
  step.run = [&cx, a, pq, pk, pv, context, weights, need_weights] {
    portable::attention(a, cx.ptr(pq), cx.ptr(pk), cx.ptr(pv), cx.ptr(context), need_weights ? cx.ptr(weights) : nullptr);
  };
  cx.define(n.outputs[0], fully_connected(cx, n, st, 3, context, proj_w, proj_b, e, e));
  if (n.outputs.size() > 1) cx.define(n.outputs[1], weights);
}

void lower_distance(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const double p = cx.float_arg(n, "p").value_or(2.0);
  if (!(p >= 0)) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": p " + std::to_string(p) + " (0 or more)");
  if (base == "pdist" || base == "_pdist_forward") {
    const int x = cx.tensor_arg(n, "self", 0);
    const Shape xs = cx.slot(x).shape;
    if (xs.size() != 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " (2 dims)");
    const i64 rows = xs[0], cols = xs[1];
    const int out = cx.new_tensor({rows * std::max<i64>(rows - 1, 0) / 2}, false);
    cx.portable_map(x, out, [rows, cols, p](const float* a, float* b) { portable::pdist(a, b, rows, cols, p); });
    return cx.define(n.outputs[0], out);
  }
  // cdist: x1 [..., P, M], x2 [..., R, M], the leading dims broadcast.
  int x1 = cx.tensor_arg(n, "x1", 0), x2 = cx.tensor_arg(n, "x2", 1);
  const Shape s1 = cx.slot(x1).shape, s2 = cx.slot(x2).shape;
  if (s1.size() < 2 || s2.size() < 2 || s1.back() != s2.back())
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": x1 " + shape_str(s1) + " and x2 " + shape_str(s2) + " (rows of one length)");
  const auto batch_shape = shape_rules::broadcast(Shape(s1.begin(), s1.end() - 2), Shape(s2.begin(), s2.end() - 2));
  if (!batch_shape) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": the batch dims of " + shape_str(s1) + " and " + shape_str(s2) + " do not broadcast");
  const i64 rows1 = s1[s1.size() - 2], rows2 = s2[s2.size() - 2], cols = s1.back(), batch = numel(*batch_shape);
  Shape b1 = *batch_shape, b2 = *batch_shape, out_shape = *batch_shape;
  b1.insert(b1.end(), {rows1, cols});
  b2.insert(b2.end(), {rows2, cols});
  out_shape.insert(out_shape.end(), {rows1, rows2});
  x1 = cx.as_layout(broadcast_to(cx, x1, b1), false);
  x2 = cx.as_layout(broadcast_to(cx, x2, b2), false);
  const int out = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step({x1, x2}, {out});
  step.run = [&cx, x1, x2, out, batch, rows1, rows2, cols, p] { portable::cdist(cx.ptr(x1), cx.ptr(x2), cx.ptr(out), batch, rows1, rows2, cols, p); };
  cx.define(n.outputs[0], out);
}

void lower_pairwise_distance(Context& cx, const Node& n, NodeState&) {
  int x1 = cx.tensor_arg(n, "x1", 0), x2 = cx.tensor_arg(n, "x2", 1);
  const Shape shape = broadcast_shape(cx, n, cx.slot(x1).shape, cx.slot(x2).shape);
  const double p = cx.float_arg(n, "p").value_or(2.0), eps = cx.float_arg(n, "eps").value_or(1e-6);
  const bool keepdim = cx.int_arg(n, "keepdim").value_or(0) != 0;
  // torch's norm over the last dim of the broadcast shape (a 0-d one is its own).
  const i64 cols = shape.empty() ? 1 : shape.back(), rows = numel(shape) / std::max<i64>(cols, 1);
  Shape out_shape = shape;
  if (!out_shape.empty()) {
    if (keepdim) out_shape.back() = 1;
    else out_shape.pop_back();
  }
  x1 = cx.as_layout(broadcast_to(cx, x1, shape), false);
  x2 = cx.as_layout(broadcast_to(cx, x2, shape), false);
  const int out = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step({x1, x2}, {out});
  step.run = [&cx, x1, x2, out, rows, cols, p, eps] { portable::pairwise_distance(cx.ptr(x1), cx.ptr(x2), cx.ptr(out), rows, cols, p, eps); };
  cx.define(n.outputs[0], out);
}

void lower_cosine_similarity(Context& cx, const Node& n, NodeState&) {
  int x1 = cx.tensor_arg(n, "x1", 0), x2 = cx.tensor_arg(n, "x2", 1);
  const Shape shape = broadcast_shape(cx, n, cx.slot(x1).shape, cx.slot(x2).shape);
  if (shape.empty()) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": 0-dim operands (cosine_similarity needs a dim)");
  const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(1), shape.size(), cx.where(n)));
  const double eps = cx.float_arg(n, "eps").value_or(1e-8);
  const i64 outer = prod(shape, 0, dim), size = shape[dim], inner = prod(shape, dim + 1, shape.size());
  Shape out_shape = shape;
  out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(dim));
  x1 = cx.as_layout(broadcast_to(cx, x1, shape), false);
  x2 = cx.as_layout(broadcast_to(cx, x2, shape), false);
  const int out = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step({x1, x2}, {out});
  step.run = [&cx, x1, x2, out, outer, size, inner, eps] { portable::cosine_similarity(cx.ptr(x1), cx.ptr(x2), cx.ptr(out), outer, size, inner, eps); };
  cx.define(n.outputs[0], out);
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
