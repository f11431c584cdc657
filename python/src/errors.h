// tracegraph.Error and one subclass per ErrorCode ("parse" -> ParseError),
// each carrying the code's name in `.code` and the core's message (the one the
// C++ and JavaScript APIs give). A few also derive from the builtin exception
// Python code expects for that failure (ValueError, LookupError, OSError,
// MemoryError, NotImplementedError).
#pragma once

#include <nanobind/nanobind.h>

namespace tracegraph::python {

void register_errors(nanobind::module_& m);

}  // namespace tracegraph::python
