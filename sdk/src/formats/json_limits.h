// The JSON parser's limits from a reader's LoadLimits.
#pragma once

#include "support/json_util.h"
#include "tracegraph/load_limits.h"

namespace tracegraph::detail {

inline JsonLimits json_limits(const LoadLimits& l) { return {l.max_json_depth, l.max_json_string_bytes, l.max_json_memory_bytes}; }

}  // namespace tracegraph::detail
