// Reading and writing NumPy's .npy format, so that Python users can hand
// tensors over (np.save / np.load) without the exported format.
//
// Layout: the magic "\x93NUMPY", a version byte pair (1.0: 2-byte header
// length; 2.0 and 3.0: 4-byte), the header (a Python dict literal:
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }), then the
// elements in C order. Little-endian (or single-byte) element types of the
// core's dtypes are read; big-endian data, Fortran order and object arrays are
// kUnsupported. Every size the header states is checked against the file
// before anything is allocated.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/load_limits.h"
#include "tracegraph/tensor.h"

namespace tracegraph {

// Parses a whole .npy file held in memory (the tensor owns a copy of the
// data). Errors name `source` and the byte offset or header field concerned:
// kParse (not .npy, a malformed header), kTruncated (data shorter than the
// shape says), kBadShape, kUnsupported, kLimitExceeded.
Tensor parse_npy(std::span<const std::byte> bytes, std::string_view source, const LoadLimits& limits = {});
Tensor read_npy(const std::string& path, const LoadLimits& limits = {});

// Serializes a CPU tensor (version 1.0, or 2.0 when the header needs it; the
// header padded so that the data starts at a multiple of 64 bytes).
std::vector<std::byte> write_npy(const Tensor& tensor);
void save_npy(const Tensor& tensor, const std::string& path);

}  // namespace tracegraph
