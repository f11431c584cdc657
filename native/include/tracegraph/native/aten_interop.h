// Conversion between the core's tensors and LibTorch's, without copies where
// the layouts allow it.
#pragma once

#include <ATen/core/Tensor.h>

#include <exception>
#include <string>

#include "tracegraph/error.h"
#include "tracegraph/tensor.h"

namespace tracegraph::native {

DType from_aten_dtype(c10::ScalarType type);  // kUnsupported for types the core lacks
c10::ScalarType to_aten_dtype(DType dtype);
Device from_aten_device(const c10::Device& device);
c10::Device to_aten_device(const Device& device);

// A view of a contiguous at::Tensor (CPU or CUDA) that keeps it alive; a
// non-contiguous one is made contiguous first (a copy).
Tensor from_aten(const at::Tensor& tensor);
// An at::Tensor over the same bytes (no copy) that keeps `tensor` alive.
at::Tensor to_aten(const Tensor& tensor);

// What a LibTorch exception says, in one line: its root cause where the
// TorchScript interpreter wraps it ("The following operation failed in the
// TorchScript interpreter. ... RuntimeError: <this>"), else its first line.
std::string torch_message(const std::exception& e);

// The one place LibTorch's exceptions become the SDK's errors: kOutOfMemory
// where an allocator ran out (CPU or CUDA), else `code`; the message is
// "<where>: LibTorch: <torch_message(e)>".
[[noreturn]] void fail_from_torch(const std::exception& e, ErrorCode code, const std::string& where);

// Runs fn(); the SDK's own errors pass through, any other exception (LibTorch's)
// goes through fail_from_torch(code, where).
template <class F>
decltype(auto) translate_torch_errors(ErrorCode code, const std::string& where, F&& fn) {
  try {
    return fn();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail_from_torch(e, code, where);
  }
}

}  // namespace tracegraph::native
