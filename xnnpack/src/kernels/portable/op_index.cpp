// Advanced indexing (index.Tensor, index_select, gather, embedding), pixel_shuffle, where, and the casts of
// values held as floats to integers and bool.
#include "kernels/portable/portable.h"

#include <cmath>

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {

i64 count_nonzero(const float* x, i64 count) {
  i64 n = 0;
  for (i64 i = 0; i < count; ++i) n += x[i] != 0.0f;
  return n;
}

void nonzero(const float* x, const std::vector<i64>& shape, float* y, i64 rows, bool by_dim, float fill) {
  const std::size_t rank = shape.size();
  const i64 count = product(shape, 0, rank);
  // Where coordinate d of row `row` goes.
  auto cell = [&](i64 row, std::size_t d) -> float& {
    return by_dim ? y[static_cast<i64>(d) * rows + row] : y[row * static_cast<i64>(rank) + static_cast<i64>(d)];
  };
  std::vector<i64> at(rank, 0);  // the coordinates of element i
  i64 row = 0;
  for (i64 i = 0; i < count && row < rows; ++i) {
    if (x[i] != 0.0f) {
      for (std::size_t d = 0; d < rank; ++d) cell(row, d) = static_cast<float>(at[d]);
      ++row;
    }
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < shape[d]) break;
      at[d] = 0;
    }
  }
  for (; row < rows; ++row)
    for (std::size_t d = 0; d < rank; ++d) cell(row, d) = fill;
}

bool index(const float* x, float* y, const std::vector<i64>& x_shape, const std::vector<const float*>& indices,
           const std::vector<i64>& index_shape, double* bad) {
  const std::size_t rank = x_shape.size(), k = index_shape.size();
  std::vector<std::size_t> indexed;
  for (std::size_t d = 0; d < indices.size(); ++d)
    if (indices[d]) indexed.push_back(d);
  const bool adjacent = indexed.empty() || indexed.back() - indexed.front() + 1 == indexed.size();
  const std::size_t first = adjacent && !indexed.empty() ? indexed.front() : 0;  // where the index dims go in y
  // y's dims: for each, the x dim it walks (or -1: an index dim).
  std::vector<i64> y_shape;
  std::vector<int> walks;
  auto kept = [&](std::size_t d) { return d >= indices.size() || !indices[d]; };
  if (adjacent) {
    for (std::size_t d = 0; d < first; ++d) y_shape.push_back(x_shape[d]), walks.push_back(static_cast<int>(d));
    for (std::size_t j = 0; j < k; ++j) y_shape.push_back(index_shape[j]), walks.push_back(-1);
    for (std::size_t d = indexed.empty() ? 0 : indexed.back() + 1; d < rank; ++d) y_shape.push_back(x_shape[d]), walks.push_back(static_cast<int>(d));
  } else {
    for (std::size_t j = 0; j < k; ++j) y_shape.push_back(index_shape[j]), walks.push_back(-1);
    for (std::size_t d = 0; d < rank; ++d)
      if (kept(d)) y_shape.push_back(x_shape[d]), walks.push_back(static_cast<int>(d));
  }
  std::vector<i64> x_stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) x_stride[d - 1] = x_stride[d] * x_shape[d];
  const i64 count = product(y_shape, 0, y_shape.size());
  std::vector<i64> at(y_shape.size(), 0);
  for (i64 e = 0; e < count; ++e) {
    i64 offset = 0, b = 0;  // b: the flat position in index_shape
    for (std::size_t j = 0; j < y_shape.size(); ++j) {
      if (walks[j] >= 0) offset += at[j] * x_stride[static_cast<std::size_t>(walks[j])];
      else b = b * y_shape[j] + at[j];
    }
    for (std::size_t d : indexed) {
      const double v = indices[d][b];
      i64 i = static_cast<i64>(v);
      if (i < 0) i += x_shape[d];
      if (v != std::trunc(v) || i < 0 || i >= x_shape[d]) {
        *bad = v;
        return false;
      }
      offset += i * x_stride[d];
    }
    y[e] = x[offset];
    for (std::size_t j = y_shape.size(); j-- > 0;) {
      if (++at[j] < y_shape[j]) break;
      at[j] = 0;
    }
  }
  return true;
}

bool gather(const float* x, const float* index, float* y, const std::vector<i64>& x_shape, const std::vector<i64>& index_shape,
            std::size_t dim, double* bad) {
  const std::size_t rank = index_shape.size();
  std::vector<i64> x_stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) x_stride[d - 1] = x_stride[d] * x_shape[d];
  // x's offset of each index element with the gathered dim at 0.
  std::vector<i64> walk_stride = x_stride;
  walk_stride[dim] = 0;
  StridedWalk walk(index_shape, walk_stride);
  const i64 count = product(index_shape, 0, rank);
  for (i64 e = 0; e < count; ++e, walk.next()) {
    const double v = index[e];
    i64 i = static_cast<i64>(v);
    if (i < 0) i += x_shape[dim];
    if (v != std::trunc(v) || i < 0 || i >= x_shape[dim]) {
      *bad = v;
      return false;
    }
    y[e] = x[walk.offset() + i * x_stride[dim]];
  }
  return true;
}

void pixel_shuffle(const float* x, float* y, i64 planes, i64 channels, i64 h, i64 w, i64 r) {
  for (i64 p = 0; p < planes; ++p)
    for (i64 c = 0; c < channels; ++c)
      for (i64 i = 0; i < r; ++i)
        for (i64 j = 0; j < r; ++j) {
          const float* src = x + ((p * channels + c) * r * r + i * r + j) * h * w;
          float* dst = y + (p * channels + c) * h * r * w * r;
          for (i64 yy = 0; yy < h; ++yy)
            for (i64 xx = 0; xx < w; ++xx) dst[(yy * r + i) * w * r + xx * r + j] = src[yy * w + xx];
        }
}

void where(const float* c, const float* a, const float* b, float* y, i64 count) {
  for (i64 i = 0; i < count; ++i) y[i] = c[i] != 0 ? a[i] : b[i];
}

void cast_to_integer(const float* x, float* y, i64 count) {
  for (i64 i = 0; i < count; ++i) y[i] = std::trunc(x[i]);
}

void cast_to_bool(const float* x, float* y, i64 count) {
  for (i64 i = 0; i < count; ++i) y[i] = x[i] != 0 ? 1.0f : 0.0f;
}

}  // namespace tracegraph::xnnpack::portable
