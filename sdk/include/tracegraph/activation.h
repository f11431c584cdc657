// Output activation: for each graph output, what the model applies last, so
// that nobody applies a second sigmoid by mistake.
//
// Interval reasoning, walked back from the output through ops that do not
// change values (view, reshape, slice, permute, squeeze, contiguous, clone,
// detach, eval dropout, casts to float). Each op either
//  - sets a range: sigmoid, tanh, relu, clip, softmax, log-softmax; or raw
//    values (kNone): conv, linear, matmul, and the norms (batch, layer, group,
//    instance; a layer or RMS norm written by hand, centred or raw values over
//    the square root of a mean or variance, too);
//  - keeps its input's range: nearest and linear resizes, average and max
//    pooling, means, maxima over dims ("sigmoid, then upsample_bilinear2d");
//  - maps it by constants (mul, div, add, sub, neg): an activation holds while
//    the image of its interval stays inside it ("relu, then mul" for relu * 2;
//    sigmoid * 0.5 is "sigmoid, then mul"; relu * -1 is unknown), raw values
//    stay raw;
//  - or joins parts: a concatenation along the channel dim of heads that end
//    differently is reported per channel range; a stack, a lerp of gathered
//    neighbours with weights clamped to [0, 1] (core ATen's decomposed linear
//    resize: "sigmoid, then lerp") and an elementwise maximum or minimum keep
//    the activation both parts end in.
// The report names the op that set the range, with the range-keeping ops after
// it in `after`. A softmax, whose values also sum to one, survives only averages
// across its distributions; a bicubic resize overshoots and is unknown.
// It never claims what it cannot see: kUnknown is an answer, naming the op
// where the range was lost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/graph.h"

namespace tracegraph {

enum class ActivationKind {
  kNone,        // the last op is linear (conv, linear, matmul, add, a norm, an affine map): raw values
  kSigmoid,
  kTanh,
  kSoftmax,     // with dim
  kLogSoftmax,  // with dim
  kRelu,
  kClip,        // with min and/or max (clamp, clip, hardtanh, relu6)
  kPerChannel,  // a channel concatenation of heads that end differently
  kUnknown,     // anything else: an op the analysis does not read as either
};
std::string_view activation_kind_name(ActivationKind kind);

struct ChannelActivation {
  std::int64_t begin = 0;  // channel range [begin, end)
  std::int64_t end = 0;
  ActivationKind kind = ActivationKind::kUnknown;
  std::optional<std::int64_t> dim;
  std::optional<double> min, max;
};

struct Activation {
  ActivationKind kind = ActivationKind::kUnknown;
  std::optional<std::int64_t> dim;       // softmax, log-softmax
  std::optional<double> min, max;        // clip
  std::vector<ChannelActivation> channels;  // per channel
  std::vector<std::string> after;        // range-keeping ops applied after it, in order ("upsample_bilinear2d", "mul")
  std::string node;                      // the node that applies it (empty for kNone from an input)
  std::string op;                        // that node's op, the format's own name

  // "sigmoid", "clip(min=0, max=1)", "softmax(dim=1)", "per_channel([0, 1): sigmoid, [1, 3): none)",
  // "sigmoid, then upsample_bilinear2d"
  std::string str() const;
};

// One entry per graph output, in order.
std::vector<Activation> output_activation(const Graph& graph);
// [{"kind": "sigmoid", ...}, ...]
std::string output_activation_json(const std::vector<Activation>& activations, int indent = -1);

}  // namespace tracegraph
