#include "tracegraph/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tracegraph {

Device Device::parse(std::string_view text) {
  auto bad = [&] {
    fail(ErrorCode::kInvalidArgument,
         "device '" + std::string(text) + "': expected 'cpu', 'cuda' or 'cuda:N'");
  };
  if (text == "cpu") return cpu();
  if (text == "cuda") return cuda();
  constexpr std::string_view kPrefix = "cuda:";
  if (text.substr(0, kPrefix.size()) != kPrefix || text.size() == kPrefix.size()) bad();
  int index = 0;
  for (char c : text.substr(kPrefix.size())) {
    if (c < '0' || c > '9' || index > 100000) bad();
    index = index * 10 + (c - '0');
  }
  return cuda(index);
}

std::string Device::str() const {
  std::string s = type == DeviceType::kCPU ? "cpu" : "cuda";
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

std::int64_t checked_numel(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    std::int64_t d = shape[i];
    if (d < 0) {
      fail(ErrorCode::kBadShape, "shape " + shape_str(shape) + ": dim " + std::to_string(i) + " is negative");
    }
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) {
      fail(ErrorCode::kBadShape, "shape " + shape_str(shape) + ": element count overflows int64");
    }
    n *= d;
  }
  return n;
}

std::size_t checked_nbytes(DType dtype, std::span<const std::int64_t> shape) {
  const std::int64_t n = checked_numel(shape);
  const std::size_t size = dtype_size(dtype);
  if (static_cast<std::uint64_t>(n) > std::numeric_limits<std::size_t>::max() / size) {
    fail(ErrorCode::kBadShape, "shape " + shape_str(shape) + " of " + std::string(dtype_name(dtype)) +
                                   ": byte size overflows this platform's size_t");
  }
  return static_cast<std::size_t>(n) * size;
}

std::string shape_str(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t;
  t.nbytes_ = checked_nbytes(dtype, shape);
  t.numel_ = checked_numel(shape);
  t.dtype_ = dtype;
  t.defined_ = true;
  t.shape_ = std::move(shape);
  t.owns_ = true;
  // operator new[] of std::max_align_t-aligned storage, zeroed: any element type fits.
  std::shared_ptr<std::byte[]> storage(new std::byte[t.nbytes_ == 0 ? 1 : t.nbytes_]());
  t.data_ = storage.get();
  t.holder_ = std::move(storage);
  return t;
}

Tensor Tensor::borrow(void* data, std::size_t capacity, DType dtype, Shape shape, Device device,
                      std::shared_ptr<const void> keep_alive) {
  Tensor t;
  t.nbytes_ = checked_nbytes(dtype, shape);
  if (t.nbytes_ > capacity) {
    fail(ErrorCode::kOutOfRange, "borrow: shape " + shape_str(shape) + " of " + std::string(dtype_name(dtype)) +
                                     " needs " + std::to_string(t.nbytes_) + " bytes, the buffer holds " +
                                     std::to_string(capacity));
  }
  if (data == nullptr && t.nbytes_ != 0) fail(ErrorCode::kInvalidArgument, "borrow: null data pointer");
  t.numel_ = checked_numel(shape);
  t.dtype_ = dtype;
  t.defined_ = true;
  t.shape_ = std::move(shape);
  t.device_ = device;
  t.data_ = data;
  t.holder_ = std::move(keep_alive);
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  if (device_.type != DeviceType::kCPU) {
    fail(ErrorCode::kUnsupported, "clone: the core copies CPU tensors only, this one is on " + device_.str());
  }
  Tensor t = zeros(dtype_, shape_);
  if (nbytes_) std::memcpy(t.data_, data_, nbytes_);
  return t;
}

Tensor Tensor::reshape(Shape shape) const {
  if (checked_numel(shape) != numel_) {
    fail(ErrorCode::kShapeMismatch, "reshape " + shape_str(shape_) + " to " + shape_str(shape) +
                                        ": element counts differ");
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

bool Tensor::equal(const Tensor& other) const {
  if (defined() != other.defined()) return false;
  if (!defined()) return true;
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (device_.type != DeviceType::kCPU || other.device_.type != DeviceType::kCPU) {
    fail(ErrorCode::kUnsupported, "equal: the core compares CPU tensors only");
  }
  return nbytes_ == 0 || std::memcmp(data_, other.data_, nbytes_) == 0;
}

bool Tensor::allclose(const Tensor& other, double rtol, double atol) const {
  if (device_.type != DeviceType::kCPU || other.device_.type != DeviceType::kCPU) {
    fail(ErrorCode::kUnsupported, "allclose: the core compares CPU tensors only");
  }
  if (dtype_ != other.dtype_) {
    fail(ErrorCode::kDTypeMismatch, "allclose: " + std::string(dtype_name(dtype_)) + " against " + std::string(dtype_name(other.dtype_)));
  }
  if (shape_ != other.shape_) return false;
  auto close = [&](const auto* a, const auto* b) {
    for (std::int64_t i = 0; i < numel_; ++i) {
      const double x = a[i], y = b[i];
      if (!(std::abs(x - y) <= atol + rtol * std::abs(y))) return false;
    }
    return true;
  };
  if (dtype_ == DType::kFloat32) return close(data_as<float>(), other.data_as<float>());
  if (dtype_ == DType::kFloat64) return close(data_as<double>(), other.data_as<double>());
  fail(ErrorCode::kUnsupported, "allclose: float32 or float64 tensors, not " + std::string(dtype_name(dtype_)));
}

void Tensor::check_dtype(DType expected) const {
  if (dtype_ != expected) {
    fail(ErrorCode::kDTypeMismatch, "tensor is " + std::string(dtype_name(dtype_)) + ", accessed as " +
                                        std::string(dtype_name(expected)));
  }
}

}  // namespace tracegraph
