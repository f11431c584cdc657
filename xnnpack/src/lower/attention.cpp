// Attention: scaled_dot_product_attention and nn.MultiheadAttention's fused
// eval path on XNNPACK's fused attention, or on a portable kernel.
#include "lower/attention.h"
#include "lower/broadcast.h"
#include "lower/gemm.h"
#include "lower/index.h"
#include "lower/permute.h"

namespace tracegraph::xnnpack {

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

}  // namespace tracegraph::xnnpack
