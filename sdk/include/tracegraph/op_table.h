// The one table from the format's own op names (TorchScript's "aten::sigmoid_",
// "aten::hardtanh", "aten::_convolution", ...) to the SDK's canonical ops, with
// the constant arguments that matter kept as attributes (a clip's min and max,
// a softmax's dim).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/graph.h"

namespace tracegraph {

struct CanonicalOp {
  std::string name;    // "sigmoid", "clip", "softmax", "conv", "view", ...
  Attributes attributes;  // min/max of a clip, dim of a softmax or cat, ...
};

// An op name in either spelling the format holds: TorchScript's "aten::add"
// (the overload, if any, in the node's `overload` attribute) or torch.export's
// "aten.add.Tensor" (the overload in the name; "default" is the unnamed one).
struct OpName {
  std::string qualified;                // "aten::add"
  std::optional<std::string> overload;  // from the name: "Tensor", "" for "default"; nullopt for "aten::add"
};
// nullopt for an op written by the SDK itself ("relu", "conv"): no namespace.
std::optional<OpName> parse_op_name(std::string_view op);
// The op's own name without its namespace or overload: "relu_" for
// "aten::relu_" and for "aten.relu_.default", "relu" for the SDK's "relu".
std::string_view op_base(std::string_view op);
// The overload a node runs: the one its op name spells, else its `overload`
// attribute; nullopt when neither says.
std::optional<std::string> node_overload(const Node& node);

// The canonical op of a node, or nullopt when the table does not know its op.
// Attributes come from the node's constant arguments; one that is not a
// constant (a clamp bound computed at run time) is left out.
std::optional<CanonicalOp> canonical_op(const Node& node);

// The base names ("conv2d", "upsample_bilinear2d") of every aten op the table
// knows, sorted: what docs/ops.md lists.
std::vector<std::string> known_ops();

// True for an op that writes its first argument ("aten::relu_", "aten::add_",
// "aten.relu_.default"); not for dunder ops like "aten::__and__".
bool is_inplace_op(std::string_view op);
// "aten::relu_" -> "aten::relu", "aten.relu_.default" -> "aten.relu.default";
// other names unchanged.
std::string functional_op_name(std::string_view op);
// Ops whose output is a view of (shares memory with) their first input.
bool is_view_op(std::string_view op);
// The spatial rank an op's name gives: 3 for "max_pool3d_with_indices", 2
// for "aten::conv2d" and "grid_sampler_2d", 1 for "upsample_nearest1d";
// nullopt where it names none ("aten::_convolution": the input's rank says).
// The one reading of it that validation and both backends share.
std::optional<std::size_t> named_spatial_rank(std::string_view op);

// A node's constant argument `name` read as its schema's type, whatever the
// file wrote for it: the one decoder of arguments that the op table, the
// transforms, the activation analysis, validation and the backends share.
// An int[N] written as one int reads as a list; a bool reads as an int (0/1)
// and an int as a bool; an int reads as a float. nullopt when absent (or given
// as an input rather than an attribute); kSchema, naming the node, when the
// file wrote a kind the type cannot hold.
std::optional<std::int64_t> arg_int(const Node& node, std::string_view name);
std::optional<double> arg_float(const Node& node, std::string_view name);
std::optional<bool> arg_bool(const Node& node, std::string_view name);
std::optional<std::vector<std::int64_t>> arg_ints(const Node& node, std::string_view name);

// The attribute that lists, for each input of a node read from TorchScript,
// the schema argument it fills (cat's tensors all fill "tensors").
inline constexpr std::string_view kArgNamesAttribute = "arg_names";
// The overload of a node read from TorchScript ("Tensor" in aten::add.Tensor).
inline constexpr std::string_view kOverloadAttribute = "overload";
// The inputs of `node` that fill schema argument `arg` (in order).
std::vector<ValueId> inputs_for_arg(const Node& node, std::string_view arg);
// The (first) input filling schema argument `arg`; for a node without
// argument names (ops written by the SDK), input number `fallback`.
std::optional<ValueId> input_for_arg(const Node& node, std::string_view arg, std::size_t fallback);

}  // namespace tracegraph
