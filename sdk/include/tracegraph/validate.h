// Attribute validation by PyTorch's own rules, before any backend lowers or
// allocates anything: a hostile or broken file (a convolution with stride 0,
// negative padding, a pooling window wider than its padded input, a
// permutation that is not one) is refused with a typed error naming the node,
// the attribute and the rule, never an engine's internal failure later.
//
// Rules (each only where the values it needs are known: constant weights,
// static input shapes):
// - convolutions (conv1d/2d/3d, conv_transpose*, _convolution, convolution):
//   stride and dilation positive, padding not negative, output_padding smaller
//   than stride or dilation, groups positive and dividing the channels, the
//   weight's rank and channels matching the input's, the dilated kernel no
//   larger than the padded input;
// - max/avg pooling: kernel, stride, dilation positive; padding at most half
//   the (dilated) kernel; an output of at least one element;
// - resizes: output sizes and scale factors positive; slices: step positive;
//   permutations: each dim once; dims of softmax, cat, transpose, select,
//   flatten within the rank; padding lists of even length, at most two per dim.
#pragma once

#include "tracegraph/graph.h"

namespace tracegraph {

// Throws the first rule a node breaks: kInvalidArgument (a sign or range rule),
// kSchema (a list of the wrong length), kShapeMismatch (channels, weights or
// windows that do not fit the input), kOutOfRange (a dim past the rank).
void validate_attributes(const Graph& graph);

}  // namespace tracegraph
