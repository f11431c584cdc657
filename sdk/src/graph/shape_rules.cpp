#include "tracegraph/shape_rules.h"

#include <algorithm>
#include <limits>

namespace tracegraph::shape_rules {

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t p = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const std::int64_t q = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (p != q && p != 1 && q != 1) return std::nullopt;
    out[i] = p == 1 ? q : p;
  }
  return out;
}

namespace {

// Attributes come from files: the arithmetic runs in 128 bits, and a result
// past int64 saturates (a size that large is refused by the memory budget).
__extension__ typedef __int128 wide;
std::int64_t saturate(wide v) {
  constexpr wide hi = std::numeric_limits<std::int64_t>::max(), lo = std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v > hi ? hi : v < lo ? lo : v);
}

}  // namespace

std::optional<std::int64_t> window_output(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                                          std::int64_t dilation, bool ceil_mode) {
  if (stride <= 0 || dilation <= 0 || kernel <= 0) return std::nullopt;
  const wide span = wide{in} + 2 * wide{padding} - wide{dilation} * (wide{kernel} - 1) - 1;
  if (span < 0) return std::nullopt;
  wide out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= wide{in} + padding) --out;
  return saturate(out);
}

bool pool_padding_fits(std::int64_t kernel, std::int64_t padding) { return kernel > 0 && padding >= 0 && padding <= kernel / 2; }

std::int64_t transposed_output(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                               std::int64_t dilation, std::int64_t output_padding) {
  return saturate((wide{in} - 1) * stride - 2 * wide{padding} + wide{dilation} * (wide{kernel} - 1) + output_padding + 1);
}

std::optional<Shape> view(std::int64_t numel, const std::vector<std::int64_t>& sizes) {
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      return std::nullopt;
    } else if (__builtin_mul_overflow(known, sizes[i], &known)) {
      return std::nullopt;
    }
  }
  Shape out = sizes;
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) return std::nullopt;
    out[static_cast<std::size_t>(infer)] = numel / known;
  } else if (known != numel) {
    return std::nullopt;
  }
  return out;
}

std::optional<Slice> slice(std::int64_t size, std::int64_t start, std::int64_t end, std::int64_t step) {
  if (step <= 0) return std::nullopt;
  if (start < 0) start = start < -size ? 0 : start + size;
  if (end < 0) end = end < -size ? 0 : end + size;
  start = std::clamp<std::int64_t>(start, 0, size);
  end = std::clamp<std::int64_t>(end, start, size);
  // ceil((end - start) / step), without end - start + step overflowing at a huge step (fuzz_backends: 3 + INT64_MAX).
  return Slice{start, end == start ? 0 : (end - start - 1) / step + 1};
}

std::optional<std::int64_t> floor_divide(std::int64_t a, std::int64_t b) {
  if (b == 0 || (a == std::numeric_limits<std::int64_t>::min() && b == -1)) return std::nullopt;
  std::int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

std::optional<std::int64_t> remainder(std::int64_t a, std::int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return 0;
  const std::int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

}  // namespace tracegraph::shape_rules
