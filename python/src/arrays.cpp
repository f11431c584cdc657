#include "arrays.h"

#include <nanobind/ndarray.h>

#include <memory>
#include <optional>
#include <vector>

namespace nb = nanobind;

namespace tracegraph::python {
namespace {

using Array = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig>;

std::optional<DType> dtype_of(nb::dlpack::dtype t) {
  using Code = nb::dlpack::dtype_code;
  if (t.lanes != 1) return std::nullopt;
  const auto code = static_cast<Code>(t.code);
  switch (code) {
    case Code::Float:
      if (t.bits == 32) return DType::kFloat32;
      if (t.bits == 64) return DType::kFloat64;
      if (t.bits == 16) return DType::kFloat16;
      return std::nullopt;
    case Code::Bfloat: return t.bits == 16 ? std::optional(DType::kBFloat16) : std::nullopt;
    case Code::Int:
      if (t.bits == 64) return DType::kInt64;
      if (t.bits == 32) return DType::kInt32;
      if (t.bits == 16) return DType::kInt16;
      if (t.bits == 8) return DType::kInt8;
      return std::nullopt;
    case Code::UInt: return t.bits == 8 ? std::optional(DType::kUInt8) : std::nullopt;
    case Code::Bool: return t.bits == 8 ? std::optional(DType::kBool) : std::nullopt;
    case Code::Complex: return t.bits == 64 ? std::optional(DType::kComplex64) : std::nullopt;
    default: return std::nullopt;
  }
}

nb::dlpack::dtype dlpack_of(DType d) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code code, int bits) {
    nb::dlpack::dtype t;
    t.code = static_cast<std::uint8_t>(code);
    t.bits = static_cast<std::uint8_t>(bits);
    t.lanes = 1;
    return t;
  };
  switch (d) {
    case DType::kFloat32: return make(Code::Float, 32);
    case DType::kFloat64: return make(Code::Float, 64);
    case DType::kFloat16: return make(Code::Float, 16);
    case DType::kBFloat16: return make(Code::Bfloat, 16);
    case DType::kInt64: return make(Code::Int, 64);
    case DType::kInt32: return make(Code::Int, 32);
    case DType::kInt16: return make(Code::Int, 16);
    case DType::kInt8: return make(Code::Int, 8);
    case DType::kUInt8: return make(Code::UInt, 8);
    case DType::kBool: return make(Code::Bool, 8);
    case DType::kComplex64: return make(Code::Complex, 64);
  }
  fail(ErrorCode::kInternal, "to_numpy: a dtype with no DLPack code");
}

}  // namespace

Tensor borrow(nb::handle array, const std::string& what) {
  Array a;
  if (!nb::try_cast(array, a, /*convert=*/false)) {
    fail(ErrorCode::kInvalidArgument, what + ": expected a C-contiguous CPU array (numpy, or DLPack), got " +
                                          nb::cast<std::string>(nb::str(nb::handle(array.type()))));
  }
  const auto dtype = dtype_of(a.dtype());
  if (!dtype) fail(ErrorCode::kDTypeMismatch, what + ": an array of a dtype tracegraph has no type for");
  Shape shape;
  for (std::size_t i = 0; i < a.ndim(); ++i) shape.push_back(static_cast<std::int64_t>(a.shape(i)));
  // The reference is dropped with the GIL taken: the core may let go of the
  // view on a thread that does not hold it.
  PyObject* ref = array.ptr();
  Py_INCREF(ref);
  std::shared_ptr<const void> keep_alive(ref, [](const void* p) {
    nb::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(const_cast<void*>(p)));
  });
  const std::size_t bytes = checked_nbytes(*dtype, shape);
  return Tensor::borrow(const_cast<void*>(a.data()), bytes, *dtype, std::move(shape), Device::cpu(), std::move(keep_alive));
}

nb::object to_numpy(Tensor tensor) {
  if (tensor.dtype() == DType::kBFloat16) {
    fail(ErrorCode::kUnsupported, "to_numpy: numpy has no bfloat16 (an output of dtype bfloat16)");
  }
  auto* owned = new Tensor(std::move(tensor));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<std::size_t> shape(owned->shape().begin(), owned->shape().end());
  nb::ndarray<nb::numpy> array(owned->data(), shape.size(), shape.data(), owner, nullptr, dlpack_of(owned->dtype()));
  return array.cast();
}

}  // namespace tracegraph::python
