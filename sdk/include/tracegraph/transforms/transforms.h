// The default transforms, one per file under sdk/src/transforms/. Each takes
// the graph and a context (rewrite budget, constant evaluator) and returns the
// number of rewrites it made. They read ops through the op table, so they
// work on graphs read from TorchScript and on graphs made by trace().
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

#include "tracegraph/graph.h"
#include "tracegraph/optimizer.h"

namespace tracegraph {

// In-place ops to their functional form (see inplace_to_functional.h).
std::size_t inplace_to_functional_transform(Graph& graph, TransformContext& context);
// Nodes whose outputs nobody reads, and constants nobody reads.
std::size_t dead_code_elimination(Graph& graph, TransformContext& context);
// A node equal to an earlier one (same op, inputs, attributes) reads that one's outputs instead.
std::size_t common_subexpression_elimination(Graph& graph, TransformContext& context);
// Nodes whose inputs are all constants (and shape queries of static shapes)
// become constants, within context.max_fold_bytes(); integer shape arithmetic
// is folded here, the rest by the context's evaluator (a backend).
std::size_t constant_folding(Graph& graph, TransformContext& context);
// Ops that return their input unchanged: eval dropout, contiguous, detach,
// clone, identity casts and reshapes, full slices, x*1, x/1, x+0, x-0.
std::size_t noop_elimination(Graph& graph, TransformContext& context);
// A batch norm in eval mode folded into the 1D/2D/3D convolution or linear
// before it, when that op's weights are constants and the norm is its only reader.
std::size_t batch_norm_folding(Graph& graph, TransformContext& context);
// A convolution or linear followed by relu, relu6/clamp/hardtanh, sigmoid,
// tanh, hardswish or silu becomes one node carrying the activation in its
// "fused_activation" attribute (and "fused_min"/"fused_max" for a clip).
std::size_t activation_fusion(Graph& graph, TransformContext& context);
// Chains of views/reshapes collapse into one reshape; a permute (or
// transpose) followed by its inverse disappears.
std::size_t view_chain_collapse(Graph& graph, TransformContext& context);

// The attributes activation_fusion writes, and the activations it folds (canonical
// names; a clamp of known bounds is "clip"): the one list the transform,
// finalize()'s validation of a file's graph and both backends go by.
inline constexpr std::string_view kFusedActivation = "fused_activation";
inline constexpr std::string_view kFusedMin = "fused_min";
inline constexpr std::string_view kFusedMax = "fused_max";
inline constexpr std::array<std::string_view, 6> kFusibleActivations = {"relu", "clip", "sigmoid", "tanh", "hardswish", "silu"};
inline bool is_fusible_activation(std::string_view name) {
  return std::find(kFusibleActivations.begin(), kFusibleActivations.end(), name) != kFusibleActivations.end();
}

}  // namespace tracegraph
