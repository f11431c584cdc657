#include "tracegraph/native/aten_interop.h"

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

namespace tracegraph::native {

DType from_aten_dtype(c10::ScalarType type) {
  switch (type) {
    case c10::kFloat: return DType::kFloat32;
    case c10::kDouble: return DType::kFloat64;
    case c10::kHalf: return DType::kFloat16;
    case c10::kBFloat16: return DType::kBFloat16;
    case c10::kLong: return DType::kInt64;
    case c10::kInt: return DType::kInt32;
    case c10::kShort: return DType::kInt16;
    case c10::kChar: return DType::kInt8;
    case c10::kByte: return DType::kUInt8;
    case c10::kBool: return DType::kBool;
    case c10::kComplexFloat: return DType::kComplex64;
    default: fail(ErrorCode::kUnsupported, std::string("torch dtype ") + c10::toString(type) + " has no tracegraph dtype");
  }
}

c10::ScalarType to_aten_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return c10::kFloat;
    case DType::kFloat64: return c10::kDouble;
    case DType::kFloat16: return c10::kHalf;
    case DType::kBFloat16: return c10::kBFloat16;
    case DType::kInt64: return c10::kLong;
    case DType::kInt32: return c10::kInt;
    case DType::kInt16: return c10::kShort;
    case DType::kInt8: return c10::kChar;
    case DType::kUInt8: return c10::kByte;
    case DType::kBool: return c10::kBool;
    case DType::kComplex64: return c10::kComplexFloat;
  }
  fail(ErrorCode::kInternal, "unknown dtype");
}

Device from_aten_device(const c10::Device& device) {
  if (device.is_cpu()) return Device::cpu();
  if (device.is_cuda()) return Device::cuda(device.has_index() ? device.index() : -1);
  fail(ErrorCode::kUnsupported, "device " + device.str() + " is neither cpu nor cuda");
}

c10::Device to_aten_device(const Device& device) {
  if (device.type == DeviceType::kCPU) return c10::Device(c10::kCPU);
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(device.index));
}

Tensor from_aten(const at::Tensor& tensor) {
  if (!tensor.defined()) return {};
  auto keep = std::make_shared<at::Tensor>(tensor.contiguous());
  Shape shape(keep->sizes().begin(), keep->sizes().end());
  const DType dtype = from_aten_dtype(keep->scalar_type());
  return Tensor::borrow(keep->data_ptr(), keep->nbytes(), dtype, std::move(shape), from_aten_device(keep->device()),
                        std::shared_ptr<const void>(keep, keep.get()));
}

at::Tensor to_aten(const Tensor& tensor) {
  if (!tensor.defined()) return {};
  auto holder = new Tensor(tensor);
  return at::from_blob(
      const_cast<void*>(tensor.data()), tensor.shape(), [holder](void*) { delete holder; },
      at::TensorOptions().dtype(to_aten_dtype(tensor.dtype())).device(to_aten_device(tensor.device())));
}

std::string torch_message(const std::exception& e) {
  const std::string what = e.what();
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= what.size()) {
    const std::size_t end = what.find('\n', start);
    std::string line = what.substr(start, end == std::string::npos ? std::string::npos : end - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (lines.empty()) return what;
  if (what.find("The following operation failed in the TorchScript interpreter") != std::string::npos) {
    // The root cause is the last "SomethingError: ..." line of the traceback.
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      const std::size_t colon = it->find(": ");
      if (colon != std::string::npos && colon > 5 && it->compare(colon - 5, 5, "Error") == 0 && it->find(' ') >= colon) return *it;
    }
    return lines.back();
  }
  return lines.front();
}

void fail_from_torch(const std::exception& e, ErrorCode code, const std::string& where) {
  const std::string what = torch_message(e);
  // LibTorch's allocators say "not enough memory" (CPU) or throw OutOfMemoryError (CUDA).
  const bool memory = dynamic_cast<const c10::OutOfMemoryError*>(&e) || what.find("not enough memory") != std::string::npos ||
                      what.find("out of memory") != std::string::npos;
  fail(memory ? ErrorCode::kOutOfMemory : code, where + ": LibTorch: " + what);
}

}  // namespace tracegraph::native
