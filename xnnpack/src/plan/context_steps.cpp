// The planning context's steps: adding them (portable_map(), read_by_run()),
// XNNPACK's status as errors, numbers a node keeps across plans, and work
// split over the pool's threads.
#include "plan/context.h"

namespace tracegraph::xnnpack {

ErrorCode Context::code_of(xnn_status status) {
  switch (status) {
    case xnn_status_invalid_parameter: return ErrorCode::kSchema;
    case xnn_status_unsupported_parameter:
    case xnn_status_unsupported_hardware: return ErrorCode::kUnsupported;
    case xnn_status_out_of_memory: return ErrorCode::kOutOfMemory;
    default: return ErrorCode::kInternal;
  }
}

void Context::check(xnn_status status, const Node& n, const char* what) const {
  if (status != xnn_status_success) fail(code_of(status), where(n) + ": XNNPACK " + what + " failed (status " + std::to_string(status) + ")");
}

void Context::check(xnn_status status, const char* what) const {
  if (status != xnn_status_success) fail(code_of(status), std::string("xnnpack: ") + what + " failed (status " + std::to_string(status) + ")");
}

Step& Context::add_step(std::vector<int> reads, std::vector<int> writes) {
  Step step;
  step.node = current_;
  step.reads = std::move(reads);
  step.writes = std::move(writes);
  steps_.push_back(std::move(step));
  return steps_.back();
}

const float* Context::node_numbers(NodeState& st, std::size_t k, std::vector<float> values) {
  values.resize(values.size() + kTailBytes / sizeof(float), 0.0f);
  if (st.data.size() <= k) st.data.resize(k + 1);
  std::vector<float>& held = st.data[k];
  if (held.size() == values.size() && std::memcmp(held.data(), values.data(), values.size() * sizeof(float)) == 0) return held.data();
  forget_copies(held.data());
  held = std::move(values);
  padded_.insert(held.data());
  return held.data();
}

void Context::forget_copies(const float* p) {
  padded_.erase(p);
  for (auto it = constant_copies_.begin(); it != constant_copies_.end();) {
    if (std::get<0>(it->first) == p) it = constant_copies_.erase(it);
    else ++it;
  }
}

void Context::parallel_slices(i64 total, const std::function<void(i64, i64)>& f, i64 tile) const {
  pthreadpool_parallelize_1d_tile_1d(
      pool(), [](void* context, std::size_t first, std::size_t count) {
        (*static_cast<const std::function<void(i64, i64)>*>(context))(static_cast<i64>(first), static_cast<i64>(count));
      },
      const_cast<std::function<void(i64, i64)>*>(&f), static_cast<std::size_t>(std::max<i64>(total, 0)), static_cast<std::size_t>(tile),
      kNoDenormals);
}

void Context::parallel_copy_blocks(const float* src, float* dst, i64 count, i64 block, i64 src_stride, i64 dst_stride) const {
  if (count <= 0 || block <= 0) return;
  const i64 pieces = (block + kSliceFloats - 1) / kSliceFloats;
  if (pieces == 1) {
    parallel_slices(count, [&](i64 first, i64 n) { kernels::copy_blocks(src + first * src_stride, dst + first * dst_stride, n, block, src_stride, dst_stride); },
                    std::max<i64>(1, kSliceFloats / block));
    return;
  }
  const i64 piece = (block + pieces - 1) / pieces;
  parallel_slices(count * pieces, [&](i64 first, i64 n) {
    for (i64 t = first; t < first + n; ++t) {
      const i64 b = t / pieces, offset = t % pieces * piece;
      kernels::copy_blocks(src + b * src_stride + offset, dst + b * dst_stride + offset, 1, std::min(piece, block - offset), 0, 0);
    }
  });
}

Step& Context::portable_step(std::vector<int>& ins, std::vector<int> outs) {
  for (int& s : ins) s = as_layout(s, false);
  return add_step(ins, std::move(outs));
}

void Context::portable_map(int x, int out, std::function<void(const float*, float*)> kernel) {
  const int xi = as_layout(x, false);
  Step& step = add_step({xi}, {out});
  step.run = [this, xi, out, kernel = std::move(kernel)] { kernel(ptr(xi), ptr(out)); };
}

std::optional<double> Context::read_by_run(int x, std::function<double(const float*)> read) {
  auto it = observed_.find(current_.index);
  const std::optional<double> planned = it == observed_.end() ? std::nullopt : std::optional<double>(it->second);
  Step& step = add_step({x}, {});
  step.run = [this, x, read = std::move(read), planned, id = step.node] {
    const double seen = read(ptr(x));
    if (!planned || std::memcmp(&*planned, &seen, sizeof seen) != 0) throw Observed{id, seen};
  };
  if (!planned) plan_stopped_ = true;
  return planned;
}

}  // namespace tracegraph::xnnpack
