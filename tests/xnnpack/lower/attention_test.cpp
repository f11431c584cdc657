// Attention (lower/attention.cpp): nn.MultiheadAttention's fused path with
// and without its weights and with masks, scaled_dot_product_attention with
// every kind of mask, causal, long sequences in chunks.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> attention_cases() {
  std::vector<OpCase> out;
  out.push_back({"native_multi_head_attention_with_weights", [](Builder& b) {
    const ValueId q = b.input({2, 5, 6});
    const ValueId k = b.input({2, 5, 6});
    const ValueId v = b.input({2, 5, 6});
    for (bool average : {true, false}) {
      Attributes a = attrs({{"embed_dim", std::int64_t{6}}, {"num_head", std::int64_t{3}}, {"need_weights", true},
                            {"average_attn_weights", average}});
      a.set(std::string(kArgNamesAttribute),
            std::vector<std::string>{"query", "key", "value", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias"});
      const NodeId n = b.g.add_node("aten::_native_multi_head_attention",
                                    {q, k, v, b.constant({18, 6}), b.constant({18}), b.constant({6, 6}), b.constant({6})},
                                    {NewValue{}, NewValue{}}, a, average ? "mha_avg" : "mha");
      for (ValueId o : b.g.node(n).outputs) b.g.add_output(o);
    }
  }});
  // Without the weights (torchvision's ViT asks for none): XNNPACK's fused
  // attention, heads first. Heads of 5 (not a multiple of 4), one query
  // token, and the cross-attention form (key and value not the query).
  out.push_back({"native_multi_head_attention_without_weights", [](Builder& b) {
    const ValueId x = b.input({2, 7, 15}), one = b.input({3, 1, 10}), k = b.input({3, 1, 10}), v = b.input({3, 1, 10});
    auto mha = [&](ValueId q, ValueId key, ValueId value, std::int64_t embed, std::int64_t heads, const char* name) {
      Attributes a = attrs({{"embed_dim", embed}, {"num_head", heads}, {"need_weights", false}, {"average_attn_weights", true}});
      a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"query", "key", "value", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias"});
      const NodeId n = b.g.add_node("aten::_native_multi_head_attention",
                                    {q, key, value, b.constant({3 * embed, embed}), b.constant({3 * embed}), b.constant({embed, embed}), b.constant({embed})},
                                    {NewValue{}, NewValue{}}, a, name);
      b.g.add_output(b.g.node(n).outputs[0]);
    };
    mha(x, x, x, 15, 3, "self_attention");
    mha(one, k, v, 10, 2, "cross_attention_one_token");
  }});
  // With masks (nn.MultiheadAttention's key_padding_mask and attn_mask, set
  // means left out): a key padding mask [B, S] that leaves one batch item no
  // key, an attention mask [L, S], and both merged [B, H, L, S].
  out.push_back({"native_multi_head_attention_with_masks", [](Builder& b) {
    const ValueId x = b.input({2, 5, 6});
    auto mha = [&](ValueId mask, std::int64_t type, const char* name) {
      Attributes a = attrs({{"embed_dim", std::int64_t{6}}, {"num_head", std::int64_t{3}}, {"need_weights", false}, {"average_attn_weights", true},
                            {"mask_type", type}});
      a.set(std::string(kArgNamesAttribute),
            std::vector<std::string>{"query", "key", "value", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias", "mask"});
      const NodeId n = b.g.add_node("aten::_native_multi_head_attention",
                                    {x, x, x, b.constant({18, 6}), b.constant({18}), b.constant({6, 6}), b.constant({6}), mask}, {NewValue{}, NewValue{}}, a, name);
      b.g.add_output(b.g.node(n).outputs[0]);
    };
    at::Tensor padding = at::zeros({2, 5}, at::kBool);
    padding.index_put_({0, at::indexing::Slice(3, at::indexing::None)}, true);
    padding.index_put_({1}, true);  // no key left: zeros
    mha(b.g.add_constant("padding", native::from_aten(padding)), 1, "key_padding");
    mha(b.g.add_constant("causal", native::from_aten(at::ones({5, 5}, at::kBool).triu(1))), 0, "attention_mask");
    mha(b.g.add_constant("merged", native::from_aten(at::rand({2, 3, 5, 5}) > 0.6)), 2, "merged");
  }});
  out.push_back({"sdpa_plain", [](Builder& b) {
    const ValueId q = b.input({2, 3, 5, 7}), k = b.input({2, 3, 6, 7}), v = b.input({2, 3, 6, 5});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  out.push_back({"sdpa_causal_scaled", [](Builder& b) {
    const ValueId q = b.input({3, 5, 4}), k = b.input({3, 5, 4}), v = b.input({3, 5, 3});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", true}, {"scale", 0.3}}))});
  }});
  out.push_back({"sdpa_additive_mask_broadcast", [](Builder& b) {
    const ValueId q = b.input({1, 2, 4, 8}), k = b.input({1, 2, 6, 8}), v = b.input({1, 2, 6, 8}), m = b.input({4, 6});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", m}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  // A bool mask (a comparison's), with every row keeping some key: masked_fill
  // keeps key 0 of each row (mask | (iota == 0) in torch's words).
  out.push_back({"sdpa_boolean_mask_from_a_comparison", [](Builder& b) {
    const ValueId q = b.input({2, 3, 4}), k = b.input({2, 5, 4}), v = b.input({2, 5, 2}), m = b.input({2, 3, 5});
    const ValueId first_key = b.g.add_constant("first_key", native::from_aten(at::tensor({10.0f, 0.0f, 0.0f, 0.0f, 0.0f})));
    const ValueId raised = b.op("add", "Tensor", {{"self", m}, {"other", first_key}}, attrs({{"alpha", std::int64_t{1}}}));
    const ValueId keep = b.op("gt", "Scalar", {{"self", raised}}, attrs({{"other", -0.3}}));
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", keep}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  // XNNPACK's attention adds one [L, S] mask to all of a run's batch: masks
  // that vary over the batch or the heads run once per varying slice.
  out.push_back({"sdpa_key_padding_mask_per_batch", [](Builder& b) {
    const ValueId q = b.input({3, 2, 5, 6}), k = b.input({3, 2, 7, 6}), v = b.input({3, 2, 7, 5});
    const ValueId keep = b.typed_input(at::tensor({1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1}, at::kLong).to(at::kBool).reshape({3, 1, 1, 7}));
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", keep}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  out.push_back({"sdpa_additive_mask_per_head", [](Builder& b) {
    const ValueId q = b.input({2, 3, 4, 5}), k = b.input({2, 3, 5, 5}), v = b.input({2, 3, 5, 3}), m = b.input({1, 3, 4, 5});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", m}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  // A query row whose mask leaves no key: torch gives zeros (its _safe_softmax), from a bool mask and from -inf.
  out.push_back({"sdpa_rows_with_no_key_left", [](Builder& b) {
    const ValueId q = b.input({2, 3, 4}), k = b.input({2, 5, 4}), v = b.input({2, 5, 3});
    const ValueId keep = b.g.add_constant("keep", native::from_aten(at::tensor({1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, at::kLong).to(at::kBool).reshape({3, 5})));
    const ValueId add = b.g.add_constant("add", native::from_aten(at::tensor({0.0f, -INFINITY, 0.5f, 0.0f, -1.0f, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}).reshape({3, 5})));
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", keep}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}})),
                     b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", add}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  out.push_back({"sdpa_causal_queries_and_keys_of_other_lengths", [](Builder& b) {
    const ValueId q = b.input({1, 2, 6, 3}), k = b.input({1, 2, 4, 3}), v = b.input({1, 2, 4, 5});
    const ValueId q2 = b.input({2, 3, 3}), k2 = b.input({2, 7, 3}), v2 = b.input({2, 7, 1});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}}, attrs({{"dropout_p", 0.0}, {"is_causal", true}})),
                     b.op("scaled_dot_product_attention", "", {{"query", q2}, {"key", k2}, {"value", v2}}, attrs({{"dropout_p", 0.0}, {"is_causal", true}}))});
  }});
  // Past 2^20 mask floats, attention without a mask or causal runs in chunks
  // of 1024 query rows (here 2 chunks and a tail of 6) with their own masks.
  out.push_back({"sdpa_long_sequences_in_chunks", [](Builder& b) {
    const ValueId q = b.input({1, 2, 2054, 5}), k = b.input({1, 2, 1024, 5}), v = b.input({1, 2, 1024, 3});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}}, attrs({{"dropout_p", 0.0}, {"is_causal", false}})),
                     b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}}, attrs({{"dropout_p", 0.0}, {"is_causal", true}}))});
  }});
  out.push_back({"sdpa_rank_2_and_single_key", [](Builder& b) {
    const ValueId q = b.input({5, 7}), k = b.input({6, 7}), v = b.input({6, 3});
    const ValueId q1 = b.input({1, 1, 1, 9}), k1 = b.input({1, 1, 1, 9}), v1 = b.input({1, 1, 1, 2});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}}, attrs({{"dropout_p", 0.0}, {"is_causal", false}})),
                     b.op("scaled_dot_product_attention", "", {{"query", q1}, {"key", k1}, {"value", v1}}, attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(attention_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
