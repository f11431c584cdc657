// Reading and writing the safetensors format (the exported format's weights).
//
// Layout: 8 bytes little-endian header length N, N bytes of JSON header
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the data; offsets are relative to the end of the header, and the
// tensors cover the data exactly, without overlap or gaps.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracegraph/load_limits.h"
#include "tracegraph/tensor.h"

namespace tracegraph {

struct Safetensors {
  // In file order of data offsets.
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::map<std::string, std::string> metadata;

  const Tensor* find(std::string_view name) const;
};

// Parses a whole file held in memory. The tensors are views into `bytes`
// (no copy) and keep `owner` alive; a tensor whose data is not aligned for
// its element type is copied into an aligned buffer instead. Every error
// names `source` and the byte offset or tensor concerned.
Safetensors parse_safetensors(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                              std::string_view source, const LoadLimits& limits = {});

// Serializes tensors in the given order (names must be unique); the header is
// compact JSON padded with spaces to a multiple of 8 bytes, so equal inputs
// give equal bytes.
std::vector<std::byte> write_safetensors(const std::vector<std::pair<std::string, Tensor>>& tensors,
                                         const std::map<std::string, std::string>& metadata = {});

}  // namespace tracegraph
