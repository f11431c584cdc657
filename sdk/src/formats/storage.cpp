#include "formats/storage.h"

#include <cstring>

#include "tracegraph/error.h"

namespace tracegraph::detail {

Tensor tensor_from_storage(DType dtype, const Shape& shape, const std::vector<std::int64_t>& strides, std::int64_t offset,
                           const ZipData& storage, const std::string& where) {
  if (strides.size() != shape.size()) {
    fail(ErrorCode::kBadShape, where + ": " + std::to_string(strides.size()) + " strides for rank " + std::to_string(shape.size()));
  }
  const std::size_t nbytes = checked_nbytes(dtype, shape);
  const std::int64_t numel = checked_numel(shape);
  if (numel == 0) return Tensor::zeros(dtype, shape);
  if (offset < 0) fail(ErrorCode::kOutOfRange, where + ": a negative storage offset");
  const std::size_t esize = dtype_size(dtype);
  // The element furthest into the storage must lie inside it.
  std::uint64_t last = static_cast<std::uint64_t>(offset);
  bool contiguous = true;
  std::int64_t expected_stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (strides[d] < 0) fail(ErrorCode::kBadShape, where + ": a negative stride");
    if (shape[d] > 1 && strides[d] != expected_stride) contiguous = false;
    expected_stride *= shape[d];
    const std::uint64_t step = static_cast<std::uint64_t>(shape[d] - 1);
    if (strides[d] != 0 && step > (UINT64_MAX - last) / static_cast<std::uint64_t>(strides[d])) fail(ErrorCode::kBadShape, where + ": its strides overflow");
    last += step * static_cast<std::uint64_t>(strides[d]);
  }
  const std::uint64_t elements = storage.bytes.size() / esize;
  if (last >= elements) {
    fail(ErrorCode::kOutOfRange, where + " reaches element " + std::to_string(last) + " of a storage of " + std::to_string(elements) + " " +
                                     std::string(dtype_name(dtype)) + " elements");
  }
  const std::byte* base = storage.bytes.data() + static_cast<std::size_t>(offset) * esize;
  if (contiguous && reinterpret_cast<std::uintptr_t>(base) % esize == 0) {
    return Tensor::borrow(const_cast<std::byte*>(base), nbytes, dtype, shape, Device::cpu(), storage.owner);
  }
  Tensor t = Tensor::zeros(dtype, shape);
  auto* out = static_cast<std::byte*>(t.data());
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::int64_t i = 0; i < numel; ++i) {
    std::int64_t e = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) e += index[d] * strides[d];
    std::memcpy(out + static_cast<std::size_t>(i) * esize, base + static_cast<std::size_t>(e) * esize, esize);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return t;
}

std::uint64_t storage_bytes_needed(DType dtype, const Shape& shape, const std::vector<std::int64_t>& strides, std::int64_t offset,
                                   std::uint64_t max_bytes, const std::string& where) {
  if (strides.size() != shape.size()) {
    fail(ErrorCode::kBadShape, where + ": " + std::to_string(strides.size()) + " strides for rank " + std::to_string(shape.size()));
  }
  if (checked_numel(shape) == 0) return 0;
  if (offset < 0) fail(ErrorCode::kOutOfRange, where + ": a negative storage offset");
  const std::uint64_t esize = dtype_size(dtype);
  std::uint64_t last = static_cast<std::uint64_t>(offset);
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (strides[d] < 0) fail(ErrorCode::kBadShape, where + ": a negative stride");
    const std::uint64_t step = static_cast<std::uint64_t>(shape[d] - 1);
    if (strides[d] != 0 && step > (UINT64_MAX - last) / static_cast<std::uint64_t>(strides[d])) fail(ErrorCode::kBadShape, where + ": its strides overflow");
    last += step * static_cast<std::uint64_t>(strides[d]);
  }
  if (last >= max_bytes / esize) {
    fail(ErrorCode::kLimitExceeded, where + " reaches element " + std::to_string(last) + " of its storage, past max_tensor_bytes (" +
                                        std::to_string(max_bytes) + ")");
  }
  return (last + 1) * esize;
}

}  // namespace tracegraph::detail
