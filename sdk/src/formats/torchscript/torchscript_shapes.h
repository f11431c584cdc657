// The shapes the TorchScript archive reader follows while it reads with the
// input shapes given: scripted code asks a tensor's rank and sizes
// (`x.dim()`, `x.size(2)`) where they decide a branch or a loop's trip count
// (F.interpolate, the norms' input checks, a crop before a skip
// connection), and there is no LibTorch to probe them. One rule per op
// family, over what the reader knows of each input; nullopt where an op has
// no rule here or an input's shape is not known (the reader then refuses a
// question about that value, naming the op).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "tracegraph/graph.h"

namespace tracegraph::detail {

// What the reader knows of a value: a tensor's shape, or the numbers of an
// int (one) or an int[] the graph computes from shapes.
struct Known {
  std::optional<Shape> shape;
  std::optional<std::vector<std::int64_t>> ints;
};
using KnownOf = std::function<Known(ValueId)>;

// The shape of `node`'s output `output`, from its inputs' known shapes and
// numbers and its attributes (named after the schema's arguments, tensor
// inputs named in arg_names).
std::optional<Shape> infer_shape(const Node& node, std::size_t output, const KnownOf& known);

}  // namespace tracegraph::detail
