// How the values of torch's dtypes are held here (held_type.cpp): tensors
// torch holds as integers or bool are held as float32, exact up to 2^24
// (portable.h); a graph output of such a type is cast back as it is read
// (runtime.cpp). int64 inputs and constants past that are int64 slots
// (integer.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

enum class Held { kFloat, kInteger, kBool };
// How a dtype given as c10's ScalarType code (as the readers write a dtype
// argument) is held; nullopt for complex and quantized types.
std::optional<Held> held_kind(i64 code);
// How a value of dtype `d` is held.
std::optional<Held> held_kind(DType d);

}  // namespace tracegraph::xnnpack
