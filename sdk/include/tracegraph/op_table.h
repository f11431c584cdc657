// The one table from the format's own op names (TorchScript's "aten::sigmoid_",
// "aten::hardtanh", "aten::_convolution", ...) to the SDK's canonical ops, with
// the constant arguments that matter kept as attributes (a clip's min and max,
// a softmax's dim).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tracegraph/graph.h"

namespace tracegraph {

struct CanonicalOp {
  std::string name;    // "sigmoid", "clip", "softmax", "conv", "view", ...
  Attributes attributes;  // min/max of a clip, dim of a softmax or cat, ...
};

// The canonical op of a node, or nullopt when the table does not know its op.
// Attributes come from the node's constant arguments; one that is not a
// constant (a clamp bound computed at run time) is left out.
std::optional<CanonicalOp> canonical_op(const Node& node);

// True for an op that writes its first argument ("aten::relu_", "aten::add_");
// not for dunder ops like "aten::__and__".
bool is_inplace_op(std::string_view op);
// "aten::relu_" -> "aten::relu"; other names unchanged.
std::string functional_op_name(std::string_view op);
// Ops whose output is a view of (shares memory with) their first input.
bool is_view_op(std::string_view op);

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
