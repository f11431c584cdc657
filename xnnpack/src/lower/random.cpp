// Random values: rand, randn, randint (and their _like forms) and randperm,
// drawn anew at every run from a generator of ours.
#include "lower/random.h"
#include "lower/factory.h"
#include "lower/held_type.h"

namespace tracegraph::xnnpack {

void lower_random(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const auto code = cx.int_arg(n, "dtype");
  if (code && !held_kind(*code)) fail(ErrorCode::kUnsupported, cx.where(n) + ": a tensor of the scalar type " + std::to_string(*code));
  const bool integers = base == "randint" || base == "randint_like" || base == "randperm";
  if (code && !integers && held_kind(*code) != Held::kFloat)
    fail(ErrorCode::kInvalidArgument, cx.where(n) + ": " + base + " of an integer or bool dtype (torch refuses it too)");
  constexpr double kExact = 16777216.0;  // 2^24: integers past it are not exact as float32
  Shape shape;
  if (base == "randperm") {
    const i64 count = cx.int_arg(n, "n").value_or(-1);
    if (count < 0 || count > kExact) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": randperm of " + std::to_string(count) + " (0 to 2^24 here)");
    shape = {count};
  } else if (base.ends_with("_like")) {
    shape = cx.slot(cx.tensor_arg(n, "self", 0)).shape;
  } else {
    shape = size_arg(cx, n);
  }
  double low = 0, high = 1;
  if (base == "randint" || base == "randint_like") {
    low = static_cast<double>(cx.int_arg(n, "low").value_or(0));
    high = static_cast<double>(cx.int_arg(n, "high").value_or(0));
    if (!(low < high) || std::fabs(low) > kExact || std::fabs(high) > kExact)
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": randint from " + std::to_string(low) + " to " + std::to_string(high) +
                                            " (low below high, both within 2^24 here)");
  }
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape);
  // The node's stream: FNV-1a of its name, the same on every platform.
  std::uint64_t stream = 0xcbf29ce484222325ULL;
  for (unsigned char c : n.name) stream = (stream ^ c) * 0x100000001b3ULL;
  const auto runs = std::make_shared<std::uint64_t>(0);
  Step& step = cx.add_step({}, {out});
  if (base == "randperm") {
    step.run = [&cx, out, count, stream, runs] { portable::random_permutation(cx.ptr(out), count, stream + 0x9e3779b97f4a7c15ULL * ++*runs); };
  } else {
    const portable::Random kind = integers ? portable::Random::kInteger : base.starts_with("randn") ? portable::Random::kNormal : portable::Random::kUniform;
    step.run = [&cx, out, count, stream, runs, kind, low, high] {
      const std::uint64_t run_stream = stream + 0x9e3779b97f4a7c15ULL * ++*runs;
      float* y = cx.ptr(out);
      cx.parallel_slices(count, [&](i64 first, i64 n) { portable::random_values(kind, y + first, first, n, run_stream, low, high); }, kSliceFloats);
    };
  }
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
