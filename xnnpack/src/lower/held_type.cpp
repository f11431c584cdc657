// How the values of torch's dtypes are held here.
#include "lower/held_type.h"

namespace tracegraph::xnnpack {

std::optional<Held> held_kind(i64 code) {
  switch (code) {
    case 0: case 1: case 2: case 3: case 4: return Held::kInteger;  // uint8, int8, int16, int32, int64
    case 5: case 6: case 7: case 15: return Held::kFloat;           // half, float, double, bfloat16
    case 11: return Held::kBool;
    default: return std::nullopt;
  }
}

std::optional<Held> held_kind(DType d) {
  switch (d) {
    case DType::kFloat32: case DType::kFloat64: case DType::kFloat16: case DType::kBFloat16: return Held::kFloat;
    case DType::kInt64: case DType::kInt32: case DType::kInt16: case DType::kInt8: case DType::kUInt8: return Held::kInteger;
    case DType::kBool: return Held::kBool;
    default: return std::nullopt;
  }
}

}  // namespace tracegraph::xnnpack
