// Arguments that Context's readers leave to the lowerings (arguments.cpp): a
// number given as a one-element constant tensor, a tensor only the run knows.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// The argument `name` where it is a tensor input whose values only the run
// knows (not an attribute, a number or a one-element constant), else nullopt.
std::optional<ValueId> run_time_tensor(const Context& cx, const Node& n, std::string_view name);
// A number argument: an attribute or an input known before the run.
// A one-element constant tensor (fill.Tensor's value) counts as a number.
double number_arg(const Context& cx, const Node& n, std::string_view name);

}  // namespace tracegraph::xnnpack
