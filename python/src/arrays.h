// Arrays between Python and the core, without copies: a C-contiguous CPU array
// (numpy, or anything with DLPack or the buffer protocol) borrowed as a
// tg::Tensor, and a tg::Tensor handed to numpy as an array over its own bytes.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "tracegraph/tensor.h"

namespace tracegraph::python {

// A view of `array`'s bytes that holds a reference to it (released with the
// GIL taken, from whichever thread lets go last). kInvalidArgument naming
// `what` for an array that is not C-contiguous on the CPU; kDTypeMismatch for
// a dtype the core has no type for. The Python package converts first (see
// its docs), so these reach only direct callers of _core.
Tensor borrow(nanobind::handle array, const std::string& what);

// A numpy array over `tensor`'s bytes; the array owns the tensor.
nanobind::object to_numpy(Tensor tensor);

}  // namespace tracegraph::python
