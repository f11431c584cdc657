// Tensors of the core: a dtype, a shape and contiguous bytes that the tensor
// either owns or borrows (a view of a caller's buffer, no copy), plus a
// device tag saying where those bytes live.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/dtype.h"
#include "tracegraph/error.h"

namespace tracegraph {

enum class DeviceType : std::uint8_t { kCPU, kCUDA };

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = -1;  // -1: the current device of that type

  static Device cpu() { return {}; }
  static Device cuda(int index = -1) { return {DeviceType::kCUDA, index}; }
  // "cpu", "cuda", "cuda:1"; anything else is kInvalidArgument.
  static Device parse(std::string_view text);
  std::string str() const;
  friend bool operator==(const Device&, const Device&) = default;
};

using Shape = std::vector<std::int64_t>;

// Product of the dims; kBadShape on a negative dim or when it overflows int64.
std::int64_t checked_numel(std::span<const std::int64_t> shape);
// numel * dtype_size; kBadShape when that overflows size_t.
std::size_t checked_nbytes(DType dtype, std::span<const std::int64_t> shape);
// "[1, 3, 224, 224]"
std::string shape_str(std::span<const std::int64_t> shape);

class Tensor {
 public:
  // An undefined tensor: defined() is false, every accessor but defined() is invalid.
  Tensor() = default;

  // A new zero-filled CPU tensor that owns its bytes.
  static Tensor zeros(DType dtype, Shape shape);
  // A new owned CPU tensor holding a copy of `values`; numel(shape) must equal values.size().
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, Shape shape) {
    Tensor t = zeros(DTypeOf<T>::value, std::move(shape));
    if (static_cast<std::size_t>(t.numel()) != values.size()) {
      fail(ErrorCode::kShapeMismatch, "from_vector: shape " + shape_str(t.shape()) + " holds " +
                                          std::to_string(t.numel()) + " elements, given " +
                                          std::to_string(values.size()));
    }
    T* out = t.data_as<T>();
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
    return t;
  }
  // A view of `data` (no copy). `capacity` is how many bytes the caller's buffer
  // holds; it must cover the shape (else kOutOfRange). `keep_alive`, when given,
  // is held as long as the view (or any copy of it) lives; without it the caller
  // keeps the buffer alive.
  static Tensor borrow(void* data, std::size_t capacity, DType dtype, Shape shape,
                       Device device = Device::cpu(), std::shared_ptr<const void> keep_alive = nullptr);

  bool defined() const noexcept { return defined_; }
  DType dtype() const noexcept { return dtype_; }
  const Shape& shape() const noexcept { return shape_; }
  std::int64_t dim() const noexcept { return static_cast<std::int64_t>(shape_.size()); }
  std::int64_t numel() const noexcept { return numel_; }
  std::size_t nbytes() const noexcept { return nbytes_; }
  const Device& device() const noexcept { return device_; }
  // True when the bytes were allocated by this tensor (or a copy of it); false for a view.
  bool owns_data() const noexcept { return owns_; }

  void* data() noexcept { return data_; }
  const void* data() const noexcept { return data_; }
  std::span<const std::byte> bytes() const noexcept { return {static_cast<const std::byte*>(data_), nbytes_}; }
  // Typed access; kDTypeMismatch when T is not this tensor's dtype.
  template <class T>
  T* data_as() {
    check_dtype(DTypeOf<T>::value);
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data_as() const {
    check_dtype(DTypeOf<T>::value);
    return static_cast<const T*>(data_);
  }

  // An owned CPU copy of the bytes (only for CPU tensors).
  Tensor clone() const;
  // The same bytes seen with another shape of the same element count.
  Tensor reshape(Shape shape) const;

  // Same dtype, shape and bytes (CPU tensors only).
  bool equal(const Tensor& other) const;
  // Same shape and every |this - other| <= atol + rtol * |other|, as
  // torch.allclose (NaNs never close); float32/float64 CPU tensors of one dtype.
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8) const;

 private:
  void check_dtype(DType expected) const;

  std::shared_ptr<const void> holder_;
  void* data_ = nullptr;
  DType dtype_ = DType::kFloat32;
  bool defined_ = false;
  bool owns_ = false;
  Shape shape_;
  std::int64_t numel_ = 0;
  std::size_t nbytes_ = 0;
  Device device_;
};

}  // namespace tracegraph
