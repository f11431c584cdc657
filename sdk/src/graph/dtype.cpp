#include "tracegraph/dtype.h"

namespace tracegraph {
namespace {

struct DTypeInfo {
  DType dtype;
  std::size_t size;
  std::string_view name;
  std::string_view safetensors_name;
};

// One row per dtype, in enum order.
constexpr DTypeInfo kTable[] = {
    {DType::kFloat32, 4, "float32", "F32"}, {DType::kFloat64, 8, "float64", "F64"},
    {DType::kFloat16, 2, "float16", "F16"}, {DType::kBFloat16, 2, "bfloat16", "BF16"},
    {DType::kInt64, 8, "int64", "I64"},     {DType::kInt32, 4, "int32", "I32"},
    {DType::kInt16, 2, "int16", "I16"},     {DType::kInt8, 1, "int8", "I8"},
    {DType::kUInt8, 1, "uint8", "U8"},      {DType::kBool, 1, "bool", "BOOL"},
    {DType::kComplex64, 8, "complex64", "C64"},
};

const DTypeInfo& info(DType dtype) noexcept { return kTable[static_cast<std::size_t>(dtype)]; }

}  // namespace

std::size_t dtype_size(DType dtype) noexcept { return info(dtype).size; }

bool is_floating(DType dtype) noexcept {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

bool is_complex(DType dtype) noexcept { return dtype == DType::kComplex64; }

bool is_integer(DType dtype) noexcept {
  return dtype == DType::kInt64 || dtype == DType::kInt32 || dtype == DType::kInt16 || dtype == DType::kInt8 || dtype == DType::kUInt8;
}

std::optional<DType> dtype_from_torch_code(std::int64_t code) noexcept {
  switch (code) {
    case 0: return DType::kUInt8;
    case 1: return DType::kInt8;
    case 2: return DType::kInt16;
    case 3: return DType::kInt32;
    case 4: return DType::kInt64;
    case 5: return DType::kFloat16;
    case 6: return DType::kFloat32;
    case 7: return DType::kFloat64;
    case 9: return DType::kComplex64;
    case 11: return DType::kBool;
    case 15: return DType::kBFloat16;
    default: return std::nullopt;
  }
}

std::string_view dtype_name(DType dtype) noexcept { return info(dtype).name; }

std::optional<DType> dtype_from_name(std::string_view name) noexcept {
  for (const auto& row : kTable) {
    if (row.name == name) return row.dtype;
  }
  return std::nullopt;
}

std::string_view dtype_safetensors_name(DType dtype) noexcept { return info(dtype).safetensors_name; }

std::optional<DType> dtype_from_safetensors_name(std::string_view name) noexcept {
  for (const auto& row : kTable) {
    if (row.safetensors_name == name) return row.dtype;
  }
  return std::nullopt;
}

}  // namespace tracegraph
