// Tensors over the storage files of torch's archives (a .pt2's weights, a
// TorchScript archive's data/N): a shape, strides and a storage offset in
// elements, as torch keeps them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracegraph/tensor.h"
#include "tracegraph/zip_archive.h"

namespace tracegraph::detail {

// The tensor `shape` / `strides` / `offset` describe in `storage`: a view
// (keeping storage.owner alive) when contiguous and aligned, else a copy.
// `where` names it in errors: kOutOfRange when an element lies past the
// storage, kBadShape for a negative stride or a rank mismatch.
Tensor tensor_from_storage(DType dtype, const Shape& shape, const std::vector<std::int64_t>& strides, std::int64_t offset,
                           const ZipData& storage, const std::string& where);

// The bytes of the storage that the tensor `shape` / `strides` / `offset`
// reaches (to its furthest element, inclusive): what a reader inflates of its
// storage entry. 0 for a tensor with no elements; kBadShape / kOutOfRange as
// above, and kLimitExceeded past `max_bytes`.
std::uint64_t storage_bytes_needed(DType dtype, const Shape& shape, const std::vector<std::int64_t>& strides, std::int64_t offset,
                                   std::uint64_t max_bytes, const std::string& where);

}  // namespace tracegraph::detail
