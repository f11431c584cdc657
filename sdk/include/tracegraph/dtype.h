// Element types of tensors, with the names the exported format and
// safetensors use for them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tracegraph {

enum class DType : std::uint8_t {
  kFloat32,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt64,
  kInt32,
  kInt16,
  kInt8,
  kUInt8,
  kBool,
  // Two float32s, real then imaginary (torch's complex64, safetensors' C64).
  kComplex64,
};

inline constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                       DType::kBFloat16, DType::kInt64, DType::kInt32,
                                       DType::kInt16, DType::kInt8, DType::kUInt8, DType::kBool,
                                       DType::kComplex64};

// Bytes per element.
std::size_t dtype_size(DType dtype) noexcept;
bool is_floating(DType dtype) noexcept;
bool is_complex(DType dtype) noexcept;
// The integer types (int64, int32, int16, int8, uint8); bool is not one.
bool is_integer(DType dtype) noexcept;

// "float32", "int64", "bool", ... (the exported format's names, also torch's).
std::string_view dtype_name(DType dtype) noexcept;
std::optional<DType> dtype_from_name(std::string_view name) noexcept;

// The DType of torch's ScalarType code (c10's: 4 is int64, 6 float32, 9
// complex64, 11 bool, ...), as the readers write a dtype argument; nullopt
// for a type the core does not have.
std::optional<DType> dtype_from_torch_code(std::int64_t code) noexcept;

// "F32", "I64", "BOOL", ... (safetensors' names).
std::string_view dtype_safetensors_name(DType dtype) noexcept;
std::optional<DType> dtype_from_safetensors_name(std::string_view name) noexcept;

// The DType of a C++ element type, for the types that have one.
template <class T>
struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<std::int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<std::int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<std::int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<std::int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<std::uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };

}  // namespace tracegraph
