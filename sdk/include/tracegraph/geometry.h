// The geometry of a network, from its graph: for each spatial axis of each
// output, relative to a spatial input (N, C, [D,] H, W), which input sizes the
// network accepts, the output size for an accepted input size, where the
// output's voxels lie in the input (the context cut on each side) and the
// output's voxel size over the input's (its stride). What a blockwise
// predictor needs to grow a block by the network's context and write the
// valid centre, read from the graph rather than asked of the user.
//
// How, and why it is exact. Each axis is read on its own, in two parts:
//  - Where the voxels lie. Every op the analysis reads maps its output's voxel
//    grid onto its input's by an affine map that does not depend on the size:
//    output voxel i's centre lies at input coordinate offset + stride * i
//    (voxel centres at integers). A convolution or pooling (kernel k, stride
//    s, padding p, dilation d): offset d(k-1)/2 - p, stride s; a transposed
//    convolution: (p - d(k-1)/2) / s and 1/s; a resize by a scale factor
//    (not align_corners): (1/scale - 1)/2 and 1/scale; a slice from a
//    constant start a: a and its step; a padding by l: -l. The maps compose
//    exactly in rationals; operands joined by an add or a concatenation must
//    map alike (a UNet's centre crop is what makes them), else the output's
//    place is ambiguous and the answer is unknown.
//  - Which sizes fit. Each value's size is a function of the input size n
//    made of the core's shape rules (shape_rules::window_output,
//    transposed_output, slice): nondecreasing in n, and quasi-affine: with a
//    period P and growth G (both exact, carried through the graph with the
//    maps), size(n + P) = size(n) + G for all n. So "every size is at least
//    1" holds from some n on and never again fails, "two joined sizes are
//    equal" is P-periodic once both grow alike, and a slice to a fixed end
//    settles once its input reaches the end. The sizes are evaluated
//    numerically, n = 1, 2, ..., until all of that has settled and one more
//    period has been seen; below that point every size is known by
//    evaluation, above it by periodicity. No fit, no guess: the answer for
//    any n is what the shape rules give for it.
// Joins of sizes that grow at different rates (a crop to a fixed size, as a
// graph traced at one size holds, against a path that grows with the input)
// hold for finitely many n: evaluation continues until every such
// difference has kept its sign for a whole period, and `finite` says so.
//
// Crops computed at run time: numbers made of sizes (aten::size and
// aten.sym_size.int with a dim, or the size list through __getitem__ or
// prim::ListUnpack; prim::NumToTensor, aten::Int, ScalarImplicit and Float;
// add, sub, rsub, mul by a constant, floor_divide / floordiv, div rounding to
// floor or trunc and remainder by a positive constant, neg; Python's
// operator-module spellings; constants of one element) are evaluated at each n
// with the sizes and are quasi-affine with them. A slice or narrow whose
// start/end/length (its schema's arguments) are such numbers takes the
// start at the example size as its voxel offset; an accepted n that starts
// elsewhere, or a start that grows while infinitely many sizes are accepted,
// makes the axis unknown, naming the slice. A number off the axis (batch,
// channels, another axis' size) is its static size.
//
// Anything else on a spatial path (a reshape, a permute, a resize to a fixed
// size or with align_corners, an adaptive pooling to more than one voxel, an
// op the analysis does not read) makes that axis unknown, naming the node:
// never a wrong answer. Ops whose values depend on the whole axis (instance
// and group norms, a softmax over a spatial dim) keep the sizes but are
// listed in `nonlocal`: a blockwise output differs from the whole one there.
//
// Inputs: the graph inputs of rank 3 to 5 are spatial (N, C, then 1 to 3
// spatial dims). Another spatial input of the same rank and the same static
// size along an axis grows with the one the geometry is relative to (a raw
// volume and its mask); the others keep their static sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracegraph/graph.h"

namespace tracegraph {

// An exact fraction, den > 0, in lowest terms.
struct Rational {
  std::int64_t num = 0;
  std::int64_t den = 1;

  static Rational of(std::int64_t num, std::int64_t den = 1);
  double value() const { return static_cast<double>(num) / static_cast<double>(den); }
  bool is_integer() const { return den == 1; }
  std::string str() const;  // "1", "-1/4"
  friend bool operator==(const Rational&, const Rational&) = default;
};

// One spatial axis of one output, relative to one input.
struct AxisGeometry {
  std::int64_t dim = 2;  // the axis: its dim in the input and the output (2 for D of N, C, D, H, W)

  // Unknown: the node (and its op, the format's name) where the analysis lost
  // the axis, and why. Every field below is meaningless then.
  std::string unknown_node, unknown_op, unknown_reason;
  bool known() const { return unknown_reason.empty(); }

  // The accepted input sizes and the output size for each, exactly:
  // `output_sizes[n - 1]` for n in [1, periodic_from + period) (0: not
  // accepted), and from periodic_from on, output size(n + period) = output
  // size(n) + growth.
  std::int64_t period = 1;
  std::int64_t periodic_from = 1;
  std::int64_t growth = 0;
  std::vector<std::int64_t> output_sizes;
  bool finite = false;  // the accepted sizes are the finitely many in output_sizes

  // The accepted sizes as `first + step * k`, k >= 0, when they are exactly
  // that (nullopt for none, a finite set, or a union of such that is not one).
  struct Lattice {
    std::int64_t first = 0;
    std::int64_t step = 0;
  };
  std::optional<Lattice> lattice;

  // Output voxel i's centre lies at input coordinate offset + stride * i
  // (input voxel j's centre at j).
  Rational offset;
  Rational stride = Rational::of(1);

  // Output voxel i depends on the input voxels within `reach` of its centre
  // (its receptive field's radius: an upper bound, the deepest path's), and
  // `edge_effects` says whether an op on the way pads or clamps at an edge
  // (a same-padded convolution, a linear resize, a padding, a transposed
  // convolution whose windows overlap), so that output voxels near the edge
  // differ from a run on a larger input.
  Rational reach;
  bool edge_effects = false;

  std::vector<std::string> nonlocal;  // nodes whose values depend on the whole axis

  bool accepts(std::int64_t n) const { return output_size(n).has_value(); }
  // nullopt for a size the network refuses (or an unknown axis).
  std::optional<std::int64_t> output_size(std::int64_t n) const;
  // The smallest accepted size; nullopt when none.
  std::optional<std::int64_t> smallest() const;
  // The input voxels a block must read on each side beyond its context for its
  // output to equal the run on the whole input: ceil(reach - context_before())
  // where there are edge effects, else 0 (a valid network needs none).
  std::int64_t halo() const;
  // The input voxels cut before the output's first voxel: offset + (1 - stride)/2.
  Rational context_before() const;
  // The input voxels after the output's last voxel, for input size n:
  // n - offset - stride * output_size(n) + (stride - 1)/2. nullopt where n is refused.
  std::optional<Rational> context_after(std::int64_t n) const;
  // "44 + 8k", "16k, k >= 1", "n >= 3", "72 or 80", "none"
  std::string valid_sizes_str() const;
  // "sizes 44 + 8k, offset 20, stride 1" or "unknown at 'view_3' (aten::view): ..."
  std::string str() const;
};

struct OutputGeometry {
  std::string output;  // the output value's name
  std::string input;   // the input the axes are relative to
  std::vector<AxisGeometry> axes;  // one per spatial dim of the input, in order
};

// One entry per (graph output, spatial input), outputs in order; for each
// output, inputs that grow together on every axis count once (the first).
// Empty when the graph has no spatial input.
std::vector<OutputGeometry> network_geometry(const Graph& graph);

// [{"output": "y", "input": "x", "axes": [{"dim": 2, "valid": {"first": 44,
// "step": 8}, "offset": "20", "stride": "1", "context": ["20", "20"], ...}]}]
std::string geometry_json(const std::vector<OutputGeometry>& geometry, int indent = -1);

}  // namespace tracegraph
