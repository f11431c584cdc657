// Reading TorchScript archives (what torch.jit.save writes) in the core: no
// LibTorch, the same code natively and in wasm, for the page and the JS API.
// The native reader (native/include/tracegraph/native/torchscript.h) runs
// LibTorch's own loader and passes; this one reads the archive itself:
//
// - data.pkl and constants.pkl by the bounded unpickler (pickle.h): the module
//   tree, its tensors (their storages under data/ and constants/, strides
//   and storage offsets honoured) and its other attributes;
// - the serialized code under code/ (the canonical form PyTorch's printer
//   emits): each module's forward, its calls of submodules' forwards inlined
//   into one graph. Straight-line code (a traced module) is read, and
//   scripted code whose control flow is known while reading: an `if` on a
//   constant (self.training, `x is None`, comparisons of constants) runs one
//   block, a branch that only raises is an argument check and is dropped, as
//   is a check function (returns None, changes nothing) it cannot follow; a
//   `for` over range(N) or a list unrolls. Given the input shapes, the reader
//   follows shapes through the ops (sdk/src/formats/torchscript/torchscript_shapes.h), so that
//   ranks and sizes decide branches and trip counts as they do for the
//   native reader (F.interpolate, the norms, a crop before a skip
//   connection); where sizes (not only ranks) decided, the metadata's
//   "specialized_to_input_shapes" says so. Without them such code is
//   kNeedsInputShapes; branches on tensor values are refused naming the
//   entry and line.
//
// Each call of an aten op becomes a node like the native reader's: op
// "aten::NAME", its overload (chosen by the arguments' kinds among LibTorch's
// schemas, sdk/src/formats/torchscript/aten_schemas.inc) in `overload`, tensor arguments as
// inputs named in `arg_names`, the others attributes named after the schema
// argument; in-place ops are made functional. Values have no dtype or shape
// until set_input_shapes()/finalize() (there is no LibTorch to probe them).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/exported_graph.h"
#include "tracegraph/load_limits.h"

namespace tracegraph {

// kUnsupported names the code entry and line of what cannot be read; the
// other errors name the archive entry and offset.
// input_shapes: one per forward argument, float32 inputs (empty: read without them).
ExportedGraph read_torchscript_archive(std::span<const std::byte> bytes, std::shared_ptr<const void> owner, std::string_view source,
                                       const LoadLimits& limits = {}, const std::vector<Shape>& input_shapes = {});
ExportedGraph load_torchscript_archive(const std::string& path, const LoadLimits& limits = {}, const std::vector<Shape>& input_shapes = {});

// What LibTorch's own loader (torch::jit::load) would parse of the archive,
// checked by the core's bounded readers first (the native reader calls it
// before LibTorch sees a file): the zip directory and the sizes its entries
// inflate to, every pickle, and every code file's line lengths and expression
// nesting (brackets and postfix links, max_expression_depth). A zip archive
// is held to the core's zip reader whole (any of its errors); a pickle only
// to what is hostile by the core's measure (kTruncated, kLimitExceeded,
// kOutOfRange, kOverlap), what the core merely does not follow being left to
// LibTorch. Errors name the entry and line or offset. Not a zip archive:
// nothing to screen, LibTorch's own error says what it is.
void screen_torchscript_archive(std::span<const std::byte> bytes, std::string_view source, const LoadLimits& limits = {});
void screen_torchscript_archive(const std::string& path, const LoadLimits& limits = {});

// True for a zip archive that holds data.pkl and code/ (torch.jit.save).
bool is_torchscript_archive(std::span<const std::byte> bytes);

}  // namespace tracegraph
