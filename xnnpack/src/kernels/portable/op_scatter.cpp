// Writes by index: scatter (with a reduction), index_add / index_copy /
// index_fill along a dim, index_put at advanced indices or under a mask.
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {
namespace {

// An index held as a float: its position in a dim of `size`, negatives from
// the end, or -1 when it is not an integer in range.
i64 position(double v, i64 size) {
  if (v != std::trunc(v)) return -1;
  i64 i = static_cast<i64>(v);
  if (i < 0) i += size;
  return i >= 0 && i < size ? i : -1;
}

float combine(ScatterReduce reduce, float have, float v) {
  switch (reduce) {
    case ScatterReduce::kNone: return v;
    case ScatterReduce::kSum: case ScatterReduce::kMean: return have + v;
    case ScatterReduce::kProd: return have * v;
    case ScatterReduce::kAmax: return std::isnan(have) || std::isnan(v) ? NAN : std::max(have, v);
    case ScatterReduce::kAmin: return std::isnan(have) || std::isnan(v) ? NAN : std::min(have, v);
  }
  return v;
}

// What y holds at a position no value has reached yet, with include_self false.
float identity(ScatterReduce reduce) {
  switch (reduce) {
    case ScatterReduce::kProd: return 1;
    case ScatterReduce::kAmax: return -std::numeric_limits<float>::infinity();
    case ScatterReduce::kAmin: return std::numeric_limits<float>::infinity();
    default: return 0;
  }
}

}  // namespace

bool scatter(float* y, const std::vector<i64>& y_shape, const float* index, const std::vector<i64>& index_shape, const float* src,
             const std::vector<i64>& src_shape, float value, std::size_t dim, ScatterReduce reduce, bool include_self, double* bad) {
  const std::size_t rank = index_shape.size();
  const i64 count = product(index_shape, 0, rank), total = product(y_shape, 0, y_shape.size());
  std::vector<i64> y_stride(rank, 1), src_stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) {
    y_stride[d - 1] = y_stride[d] * y_shape[d];
    src_stride[d - 1] = src_stride[d] * src_shape[d];
  }
  // y's offset of each index element with the scattered dim at 0, and src's.
  std::vector<i64> walk_stride = y_stride;
  walk_stride[dim] = 0;
  StridedWalk to(index_shape, walk_stride), from(index_shape, src_stride);
  // How many values reach each position (mean; and, without self, whether any has).
  std::vector<i64> reached;
  if (reduce == ScatterReduce::kMean || !include_self) reached.assign(static_cast<std::size_t>(total), 0);
  for (i64 e = 0; e < count; ++e, to.next(), from.next()) {
    const i64 i = position(index[e], y_shape[dim]);
    if (i < 0) {
      *bad = index[e];
      return false;
    }
    const i64 at = to.offset() + i * y_stride[dim];
    const float v = src ? src[from.offset()] : value;
    if (!reached.empty()) {
      if (!include_self && reached[static_cast<std::size_t>(at)] == 0) y[at] = identity(reduce);
      ++reached[static_cast<std::size_t>(at)];
    }
    y[at] = combine(reduce, y[at], v);
  }
  if (reduce == ScatterReduce::kMean) {
    // torch's mean over the values (and self, when included); an integer mean would floor, ours are float32.
    for (i64 at = 0; at < total; ++at) {
      const i64 k = reached[static_cast<std::size_t>(at)] + (include_self ? 1 : 0);
      if (reached[static_cast<std::size_t>(at)] && k) y[at] /= static_cast<float>(k);
    }
  }
  return true;
}

bool index_along(float* y, i64 outer, i64 size, i64 inner, const float* index, i64 count, const float* source, float value, float alpha,
                 ScatterReduce reduce, double* bad) {
  for (i64 k = 0; k < count; ++k) {
    const i64 i = position(index[k], size);
    if (i < 0) {
      *bad = index[k];
      return false;
    }
    for (i64 o = 0; o < outer; ++o) {
      float* to = y + (o * size + i) * inner;
      const float* from = source ? source + (o * count + k) * inner : nullptr;
      for (i64 j = 0; j < inner; ++j) to[j] = combine(reduce, to[j], from ? alpha * from[j] : value);
    }
  }
  return true;
}

bool index_put(float* y, const std::vector<i64>& y_shape, const std::vector<const float*>& indices, const std::vector<i64>& index_shape,
               const float* values, bool accumulate, double* bad) {
  // The positions advanced indexing reads (portable::index), written instead.
  const std::size_t rank = y_shape.size(), k = index_shape.size();
  std::vector<std::size_t> indexed;
  for (std::size_t d = 0; d < indices.size(); ++d)
    if (indices[d]) indexed.push_back(d);
  const bool adjacent = indexed.empty() || indexed.back() - indexed.front() + 1 == indexed.size();
  std::vector<i64> shape;  // the indexed result's, as index() lays it out
  std::vector<int> walks;  // per dim of it: the y dim it walks, or -1 for an index dim
  auto kept = [&](std::size_t d) { return d >= indices.size() || !indices[d]; };
  if (adjacent) {
    const std::size_t first = indexed.empty() ? 0 : indexed.front();
    for (std::size_t d = 0; d < first; ++d) shape.push_back(y_shape[d]), walks.push_back(static_cast<int>(d));
    for (std::size_t j = 0; j < k; ++j) shape.push_back(index_shape[j]), walks.push_back(-1);
    for (std::size_t d = indexed.empty() ? 0 : indexed.back() + 1; d < rank; ++d) shape.push_back(y_shape[d]), walks.push_back(static_cast<int>(d));
  } else {
    for (std::size_t j = 0; j < k; ++j) shape.push_back(index_shape[j]), walks.push_back(-1);
    for (std::size_t d = 0; d < rank; ++d)
      if (kept(d)) shape.push_back(y_shape[d]), walks.push_back(static_cast<int>(d));
  }
  std::vector<i64> y_stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) y_stride[d - 1] = y_stride[d] * y_shape[d];
  const i64 count = product(shape, 0, shape.size());
  std::vector<i64> at(shape.size(), 0);
  for (i64 e = 0; e < count; ++e) {
    i64 offset = 0, b = 0;
    for (std::size_t j = 0; j < shape.size(); ++j) {
      if (walks[j] >= 0) offset += at[j] * y_stride[static_cast<std::size_t>(walks[j])];
      else b = b * shape[j] + at[j];
    }
    for (std::size_t d : indexed) {
      const i64 i = position(indices[d][b], y_shape[d]);
      if (i < 0) {
        *bad = indices[d][b];
        return false;
      }
      offset += i * y_stride[d];
    }
    y[offset] = accumulate ? y[offset] + values[e] : values[e];
    for (std::size_t j = shape.size(); j-- > 0;) {
      if (++at[j] < shape[j]) break;
      at[j] = 0;
    }
  }
  return true;
}

void mask_put(float* y, const float* mask, i64 positions, i64 inner, const float* values, bool accumulate, bool per_position) {
  for (i64 p = 0; p < positions; ++p) {
    if (mask[p] == 0) continue;
    float* to = y + p * inner;
    for (i64 j = 0; j < inner; ++j) to[j] = accumulate ? to[j] + values[j] : values[j];
    if (per_position) values += inner;
  }
}

void masked_select(const float* x, const float* mask, float* y, i64 count) {
  for (i64 i = 0; i < count; ++i)
    if (mask[i] != 0) *y++ = x[i];
}

}  // namespace tracegraph::xnnpack::portable
